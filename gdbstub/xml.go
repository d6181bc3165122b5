package gdbstub

import (
	"fmt"
	"strings"
)

// The target description, rr-style: target.xml names the architecture and
// includes one annex per feature. It declares no xmlns:xi, on purpose:
// Delve only follows includes when there is none. The annexes follow the
// feature definitions of gdb's gdb/features/i386/64bit-*.xml (same
// feature names, register names, sizes, numbers and types), so gdb's
// amd64-linux tdesc checks accept them.

const targetXML = `<?xml version="1.0"?>
<!DOCTYPE target SYSTEM "gdb-target.dtd">
<target>
  <architecture>i386:x86-64</architecture>
  <osabi>GNU/Linux</osabi>
  <xi:include href="64bit-core.xml"/>
  <xi:include href="64bit-sse.xml"/>
  <xi:include href="64bit-linux.xml"/>
  <xi:include href="64bit-segments.xml"/>
</target>
`

// targetAVXXML is target.xml for a CPU with AVX: the ymm registers' upper
// halves follow, from which gdb, lldb and Delve make ymm0–15.
var targetAVXXML = strings.Replace(targetXML, "</target>",
	"  <xi:include href=\"64bit-avx.xml\"/>\n</target>", 1)

// coreXML: general registers, eflags, segment selectors and the x87 unit,
// registers 0–39.
const coreXML = `<?xml version="1.0"?>
<!DOCTYPE feature SYSTEM "gdb-target.dtd">
<feature name="org.gnu.gdb.i386.core">
  <flags id="i386_eflags" size="4">
    <field name="CF" start="0" end="0"/>
    <field name="" start="1" end="1"/>
    <field name="PF" start="2" end="2"/>
    <field name="AF" start="4" end="4"/>
    <field name="ZF" start="6" end="6"/>
    <field name="SF" start="7" end="7"/>
    <field name="TF" start="8" end="8"/>
    <field name="IF" start="9" end="9"/>
    <field name="DF" start="10" end="10"/>
    <field name="OF" start="11" end="11"/>
    <field name="NT" start="14" end="14"/>
    <field name="RF" start="16" end="16"/>
    <field name="VM" start="17" end="17"/>
    <field name="AC" start="18" end="18"/>
    <field name="VIF" start="19" end="19"/>
    <field name="VIP" start="20" end="20"/>
    <field name="ID" start="21" end="21"/>
  </flags>

  <reg name="rax" bitsize="64" type="int64" regnum="0"/>
  <reg name="rbx" bitsize="64" type="int64" regnum="1"/>
  <reg name="rcx" bitsize="64" type="int64" regnum="2"/>
  <reg name="rdx" bitsize="64" type="int64" regnum="3"/>
  <reg name="rsi" bitsize="64" type="int64" regnum="4"/>
  <reg name="rdi" bitsize="64" type="int64" regnum="5"/>
  <reg name="rbp" bitsize="64" type="data_ptr" regnum="6"/>
  <reg name="rsp" bitsize="64" type="data_ptr" regnum="7"/>
  <reg name="r8" bitsize="64" type="int64" regnum="8"/>
  <reg name="r9" bitsize="64" type="int64" regnum="9"/>
  <reg name="r10" bitsize="64" type="int64" regnum="10"/>
  <reg name="r11" bitsize="64" type="int64" regnum="11"/>
  <reg name="r12" bitsize="64" type="int64" regnum="12"/>
  <reg name="r13" bitsize="64" type="int64" regnum="13"/>
  <reg name="r14" bitsize="64" type="int64" regnum="14"/>
  <reg name="r15" bitsize="64" type="int64" regnum="15"/>
  <reg name="rip" bitsize="64" type="code_ptr" format="hex" regnum="16"/>
  <reg name="eflags" bitsize="32" type="i386_eflags" regnum="17"/>
  <reg name="cs" bitsize="32" type="int32" regnum="18"/>
  <reg name="ss" bitsize="32" type="int32" regnum="19"/>
  <reg name="ds" bitsize="32" type="int32" regnum="20"/>
  <reg name="es" bitsize="32" type="int32" regnum="21"/>
  <reg name="fs" bitsize="32" type="int32" regnum="22"/>
  <reg name="gs" bitsize="32" type="int32" regnum="23"/>

  <reg name="st0" bitsize="80" type="i387_ext" regnum="24"/>
  <reg name="st1" bitsize="80" type="i387_ext" regnum="25"/>
  <reg name="st2" bitsize="80" type="i387_ext" regnum="26"/>
  <reg name="st3" bitsize="80" type="i387_ext" regnum="27"/>
  <reg name="st4" bitsize="80" type="i387_ext" regnum="28"/>
  <reg name="st5" bitsize="80" type="i387_ext" regnum="29"/>
  <reg name="st6" bitsize="80" type="i387_ext" regnum="30"/>
  <reg name="st7" bitsize="80" type="i387_ext" regnum="31"/>

  <reg name="fctrl" bitsize="32" type="int" group="float" regnum="32"/>
  <reg name="fstat" bitsize="32" type="int" group="float" regnum="33"/>
  <reg name="ftag" bitsize="32" type="int" group="float" regnum="34"/>
  <reg name="fiseg" bitsize="32" type="int" group="float" regnum="35"/>
  <reg name="fioff" bitsize="32" type="int" group="float" regnum="36"/>
  <reg name="foseg" bitsize="32" type="int" group="float" regnum="37"/>
  <reg name="fooff" bitsize="32" type="int" group="float" regnum="38"/>
  <reg name="fop" bitsize="32" type="int" group="float" regnum="39"/>
</feature>
`

// sseXML: xmm0–15 and mxcsr, registers 40–56.
const sseXML = `<?xml version="1.0"?>
<!DOCTYPE feature SYSTEM "gdb-target.dtd">
<feature name="org.gnu.gdb.i386.sse">
  <vector id="v4f" type="ieee_single" count="4"/>
  <vector id="v2d" type="ieee_double" count="2"/>
  <vector id="v16i8" type="int8" count="16"/>
  <vector id="v8i16" type="int16" count="8"/>
  <vector id="v4i32" type="int32" count="4"/>
  <vector id="v2i64" type="int64" count="2"/>
  <union id="vec128">
    <field name="v4_float" type="v4f"/>
    <field name="v2_double" type="v2d"/>
    <field name="v16_int8" type="v16i8"/>
    <field name="v8_int16" type="v8i16"/>
    <field name="v4_int32" type="v4i32"/>
    <field name="v2_int64" type="v2i64"/>
    <field name="uint128" type="uint128"/>
  </union>
  <flags id="i386_mxcsr" size="4">
    <field name="IE" start="0" end="0"/>
    <field name="DE" start="1" end="1"/>
    <field name="ZE" start="2" end="2"/>
    <field name="OE" start="3" end="3"/>
    <field name="UE" start="4" end="4"/>
    <field name="PE" start="5" end="5"/>
    <field name="DAZ" start="6" end="6"/>
    <field name="IM" start="7" end="7"/>
    <field name="DM" start="8" end="8"/>
    <field name="ZM" start="9" end="9"/>
    <field name="OM" start="10" end="10"/>
    <field name="UM" start="11" end="11"/>
    <field name="PM" start="12" end="12"/>
    <field name="FZ" start="15" end="15"/>
  </flags>

  <reg name="xmm0" bitsize="128" type="vec128" regnum="40"/>
  <reg name="xmm1" bitsize="128" type="vec128" regnum="41"/>
  <reg name="xmm2" bitsize="128" type="vec128" regnum="42"/>
  <reg name="xmm3" bitsize="128" type="vec128" regnum="43"/>
  <reg name="xmm4" bitsize="128" type="vec128" regnum="44"/>
  <reg name="xmm5" bitsize="128" type="vec128" regnum="45"/>
  <reg name="xmm6" bitsize="128" type="vec128" regnum="46"/>
  <reg name="xmm7" bitsize="128" type="vec128" regnum="47"/>
  <reg name="xmm8" bitsize="128" type="vec128" regnum="48"/>
  <reg name="xmm9" bitsize="128" type="vec128" regnum="49"/>
  <reg name="xmm10" bitsize="128" type="vec128" regnum="50"/>
  <reg name="xmm11" bitsize="128" type="vec128" regnum="51"/>
  <reg name="xmm12" bitsize="128" type="vec128" regnum="52"/>
  <reg name="xmm13" bitsize="128" type="vec128" regnum="53"/>
  <reg name="xmm14" bitsize="128" type="vec128" regnum="54"/>
  <reg name="xmm15" bitsize="128" type="vec128" regnum="55"/>

  <reg name="mxcsr" bitsize="32" type="i386_mxcsr" group="vector" regnum="56"/>
</feature>
`

// linuxXML: orig_rax, register 57, which gdb uses to restart system calls.
const linuxXML = `<?xml version="1.0"?>
<!DOCTYPE feature SYSTEM "gdb-target.dtd">
<feature name="org.gnu.gdb.i386.linux">
  <reg name="orig_rax" bitsize="64" type="int" regnum="57"/>
</feature>
`

// segmentsXML: the fs and gs bases, registers 58–59. Delve takes the TLS
// base from fs_base; lldb 19 too, named the thread pointer (generic="tp",
// as lldb-server's), without which it read no thread-local variable.
const segmentsXML = `<?xml version="1.0"?>
<!DOCTYPE feature SYSTEM "gdb-target.dtd">
<feature name="org.gnu.gdb.i386.segments">
  <reg name="fs_base" bitsize="64" type="int" regnum="58" generic="tp"/>
  <reg name="gs_base" bitsize="64" type="int" regnum="59"/>
</feature>
`

// avxXML: the upper halves of ymm0–15, registers 60–75.
var avxXML = func() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?>
<!DOCTYPE feature SYSTEM "gdb-target.dtd">
<feature name="org.gnu.gdb.i386.avx">
`)
	for i := range 16 {
		fmt.Fprintf(&b, "  <reg name=\"ymm%dh\" bitsize=\"128\" type=\"uint128\" regnum=\"%d\"/>\n", i, regYMM0H+i)
	}
	b.WriteString("</feature>\n")
	return b.String()
}()

// featureAnnexes are the qXfer:features:read annexes but target.xml,
// which depends on the CPU (xferFeatures).
var featureAnnexes = map[string]string{
	"64bit-core.xml":     coreXML,
	"64bit-sse.xml":      sseXML,
	"64bit-linux.xml":    linuxXML,
	"64bit-segments.xml": segmentsXML,
	"64bit-avx.xml":      avxXML,
}

// xmlEscape escapes s for an XML attribute or text.
func xmlEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		default:
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xfffd {
				// Not allowed in XML 1.0 (or an invalid byte): keep it visible.
				fmt.Fprintf(&b, "\\x%02x", r)
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

module github.com/hermitdbg/hermit

go 1.26.0

require (
	github.com/chzyer/readline v1.5.1
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/vmihailenco/msgpack/v5 v5.4.1
	golang.org/x/arch v0.28.0
	golang.org/x/sys v0.50.0
)

require github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect

# import_new: a module written after the import system has looked at its
# directory is found by the next import, as Python finds it natively: the
# directory's mtime moved, so its cached listing is read again.
import os
import shutil
import sys
import tempfile

top = tempfile.mkdtemp()
mods = os.path.join(top, "m")
os.mkdir(mods)
sys.path.insert(0, mods)
try:
    import not_there  # noqa: F401 (fills the directory's cache)
except ImportError:
    pass
with open(os.path.join(mods, "written_later.py"), "w") as f:
    f.write("X = 42\n")
import written_later  # noqa: E402

print("imported a module written after the first look:", written_later.X)
shutil.rmtree(top)

"""An artifact whose sm_90a PTX is compiled from a hand-edited .cu (NVRTC,
fusec's options), the manifest's PTX hash and its own hash redone, so that
the runtime and tests/gpu/validate.c load it as they load fusec's.
   python3 mkvar.py NAME GENDIR OUTDIR EDITED.cu [KEY=VALUE ...]
KEY=VALUE: text substituted in EDITED.cu first (e.g. UNROLL=8). Needs
/tmp/nvc (cc -I$CUDA/include bench/runs/s44-bcast/nvc.c -L$CUDA/lib64 -lnvrtc -o /tmp/nvc)."""
import hashlib
import os
import re
import shutil
import subprocess
import sys

name, gen, out, edited = sys.argv[1:5]
os.makedirs(out, exist_ok=True)
for f in os.listdir(gen):
    if f.startswith(name + '.') or f.startswith(name + '_ref'):
        shutil.copy(os.path.join(gen, f), out)
cu = open(edited).read()
for kv in sys.argv[5:]:
    k, v = kv.split('=', 1)
    cu = cu.replace(k, v)
open(out + '/exp.cu', 'w').write(cu)
env = dict(os.environ, LD_LIBRARY_PATH='/usr/local/cuda/lib64')
subprocess.run(['/tmp/nvc', out + '/exp.cu', 'sm_90a', out + '/raw.ptx'], check=True, stderr=subprocess.DEVNULL, env=env)
head = open(f'{gen}/{name}.sm_90a.ptx').read().split('\n')[:2]
ptx = '\n'.join(head) + '\n' + open(out + '/raw.ptx').read()
open(f'{out}/{name}.sm_90a.ptx', 'w').write(ptx)
os.remove(out + '/raw.ptx'), os.remove(out + '/exp.cu')
m = open(f'{gen}/{name}.manifest').read()
m = re.sub(r'(target sm_90a \S+ )[0-9a-f]{64}', r'\g<1>' + hashlib.sha256(ptx.encode()).hexdigest(), m)
body = m[:m.index('manifest-sha256 ')]
open(f'{out}/{name}.manifest', 'w').write(body + 'manifest-sha256 ' + hashlib.sha256(body.encode()).hexdigest() + '\n')

import sys, hashlib, re, shutil, os, subprocess
name, gen, out, bb, per_block = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
os.makedirs(out, exist_ok=True)
for f in os.listdir(gen):
    if f.startswith(name + '.') or f.startswith(name + '_ref'): shutil.copy(os.path.join(gen, f), out)
cu = open('build/bmv/bcast_mid_bf16.cu').read().replace('nbc = (a.n_B + 8 - 1) / 8', 'nbc = (a.n_B + %d - 1) / %d' % (bb, bb)).replace('bc * 8, b1 = b0 + 8 < a.n_B ? b0 + 8', 'bc * %d, b1 = b0 + %d < a.n_B ? b0 + %d' % (bb, bb, bb))
open(out + '/exp.cu', 'w').write(cu)
subprocess.run(['/tmp/nvc', out + '/exp.cu', 'sm_90a', out + '/raw.ptx'], check=True, stderr=subprocess.DEVNULL, env=dict(os.environ, LD_LIBRARY_PATH='/usr/local/cuda/lib64'))
old = open(f'{gen}/{name}.sm_90a.ptx').read().split('\n')
ptx = '\n'.join(old[:2]) + '\n' + open(out + '/raw.ptx').read()
open(f'{out}/{name}.sm_90a.ptx', 'w').write(ptx)
os.remove(out + '/raw.ptx'); os.remove(out + '/exp.cu')
h = hashlib.sha256(ptx.encode()).hexdigest()
m = open(f'{gen}/{name}.manifest').read()
m = re.sub(r'(target sm_90a \S+ )[0-9a-f]{64}', r'\g<1>' + h, m)
m = m.replace('op fused launch bcast_mid_bf16_f0 grid=grid(1*B*T*C,2048,0)', 'op fused launch bcast_mid_bf16_f0 grid=grid(1*B*T*C,%s,0)' % per_block)
body = m[:m.index('manifest-sha256 ')]
m = body + 'manifest-sha256 ' + hashlib.sha256(body.encode()).hexdigest() + '\n'
open(f'{out}/{name}.manifest', 'w').write(m)

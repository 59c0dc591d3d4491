import re, subprocess, sys, os
G='/work/main/build/ptxexp/gen'; V='/work/main/build/ptxexp/var'
NV='/usr/local/cuda/bin/nvcc'; PX='/usr/local/cuda/bin/ptxas'
def regs(ptx, name):
    o=subprocess.run([PX,'-arch=sm_90','-v',ptx,'-o','/dev/null'],capture_output=True,text=True).stderr
    blk=o[o.index("'%s'"%name):]
    r=int(re.search(r'Used (\d+) registers',blk).group(1)); sp=int(re.search(r'(\d+) bytes spill stores',blk).group(1))
    return r,sp
for c in sys.argv[1:]:
    s=open(f'{G}/{c}.cu').read()
    i=s.index(f'{c}_f0(const'); i=s.rindex('extern "C"',0,i)
    j=s.index('/* u variant')
    k=s[i:j]
    a=k.index("\t} else\n\tif (fz_vec) {")
    v=k[:a]+"\t}\n}\n"
    open(f'{V}/{c}_v.cu','w').write(s[:i]+v+s[j:])
    subprocess.run([NV,'-arch=sm_90','-ptx',f'{V}/{c}_v.cu','-o',f'{V}/{c}_v.ptx'],capture_output=True)
    p=open(f'{V}/{c}_v.ptx').read()
    # keep only the f0 entry with its original name (the u kernel is gone: validate's unfused uses the generated PTX? no: --ptx replaces the module)
    best=None
    for b in (8,7,6,5,4):
        e=p.index(f'.entry {c}_f0'); e2=p.index('.minnctapersm', e)
        q=p[:e2]+re.sub(r'\.minnctapersm \d+', f'.minnctapersm {b}', p[e2:e2+20],1)+p[e2+20:]
        open(f'{V}/t.ptx','w').write(q)
        r,sp=regs(f'{V}/t.ptx', f'{c}_f0')
        print(c,'vec-only min_blocks',b,'regs',r,'spill',sp)
        if b==4: open(f'{V}/{c}.vec_mb4.sm_90.ptx','w').write(q)
        if sp==0 and best is None:
            best=b; open(f'{V}/{c}.vec_mb{b}.sm_90.ptx','w').write(q)
    r,sp=regs(f'{G}/{c}.sm_90.ptx', f'{c}_f0'); print(c,'built: regs',r,'spill',sp)

# SPDX-License-Identifier: Apache-2.0
"""Scratch (not a test, not a bench): per S-Log record, from the `XT` lines that trace_backend.patch's
build prints into the simulator's log (bench/difftx/README.md "Group commit"): its request on `s_wb`,
its log pages' PROGRAMs issued (`NQ ... sl1` between its request and its completion: the backend's
S-Log unit holds one record at a time, and the buffer sends the next record after this one's
completion) and completed (`NC` of their tags), and its completion (`WC` of its tag).

`python bench/difftx/scratch/xt_records.py <sim_*.log>`
"""
import sys,re,statistics as st
ev=[]
for line in open(sys.argv[1]):
    p=line.split()
    if len(p)<3 or p[0]!='XT' or not p[1].isdigit(): continue
    d={}
    for x in p[3:]:
        m=re.match(r'([a-z]+)(\d+)$',x)
        if m: d[m.group(1)]=int(m.group(2))
    ev.append((int(p[1]),p[2],d))
rows=[]
for i,(t,k,d) in enumerate(ev):
    if k!='WB' or d.get('sl')!=1: continue
    tag=d['tag']; nqs=[]; wc=None
    for t2,k2,d2 in ev[i+1:]:
        if k2=='NQ' and d2['sl']==1: nqs.append((t2,d2['tag']))
        if k2=='WC' and d2['tag']==tag: wc=t2; break
    if not nqs or wc is None:
        continue                        # no log page seen, or the run ended before its completion
    ncs=[]
    for tq,tg in nqs:
        for t3,k3,d3 in ev:
            if t3>tq and k3=='NC' and d3['tag']==tg: ncs.append(t3); break
    rows.append(dict(tx=d['tx'],wb=t,pages=len(nqs),first_nq=min(x[0] for x in nqs),log_done=max(ncs),wc=wc))
print('records',len(rows),'pages',sum(r['pages'] for r in rows))
a=[r['wc']-r['log_done'] for r in rows]; pr=[r['log_done']-r['first_nq'] for r in rows]; ik=[r['first_nq']-r['wb'] for r in rows]
tail=[r['wc']-r['wb'] for r in rows]
for n,v in [('completion - last log page done',a),('first log PROGRAM issue -> last log page done',pr),('request -> first PROGRAM issue',ik),('request -> completion',tail)]:
    print(n,'min/med/mean/max',min(v),int(st.median(v)),int(st.mean(v)),max(v))
print('completion within 200 cycles of the last log page:',sum(1 for x in a if 0<=x<200),'of',len(a))

#!/bin/bash
# How this directory was made (ReleaseDocumentTest reads it): runs the release at OLD_TREE, a built tree of commit
# 8d0403e (the last before the control layer: git worktree add DIR 8d0403e; mvn -o -q package -DskipTests there),
# makes a document through that service's own REST API, and saves the document it wrote and the answers of its
# reads, with the state directory, the ports and the API port as placeholders (@DIR@, @TCP1@, @TCP2@, @API@).
# Usage: capture.sh OLD_TREE OUT_DIR
set -euo pipefail
OLD=$1 OUT=$2
FP=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)/fio-jobs/lib/free_port.py
S=$(mktemp -d); mkdir -p "$OUT/answers"
KEY='DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:'
API=$(python3 $FP); TCP=$(python3 $FP $API); TCP2=$(python3 $FP $API $TCP)
IMG=$S/img; mkdir -p $IMG $S/keys; truncate -s 64M $IMG/disk0.img
echo "$KEY" > $S/keys/h2.key
python3 -c 'import base64,os,zlib; k=os.urandom(32); print("NVMeTLSkey-1:01:"+base64.b64encode(k+zlib.crc32(k).to_bytes(4,"little")).decode()+":")' > $S/keys/h1.psk
chmod 600 $S/keys/*
cat > $S/config.json <<J
{"api": {"address": "127.0.0.1", "port": $API},
 "storage": {"fileDirectories": ["$IMG"]},
 "bdevs": [], "subsystems": []}
J
"$OLD/bin/nvmf4j-target" --state-dir $S > $S/log 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true' EXIT
for i in $(seq 1 600); do curl -sf -o /dev/null -H "Authorization: Bearer $(cat $S/api-token 2>/dev/null)" http://127.0.0.1:$API/api/v1/subsystems && break; sleep 0.2; done
T=$(cat $S/api-token)
c() { local m=$1 p=$2 b=${3:-}; if [ -n "$b" ]; then curl -sS -X $m -H "Authorization: Bearer $T" -H 'Content-Type: application/json' -d "$b" -w ' %{http_code}\n' http://127.0.0.1:$API$p; else curl -sS -X $m -H "Authorization: Bearer $T" -w ' %{http_code}\n' http://127.0.0.1:$API$p; fi; }
N1=nqn.2026-12.io.nvmf4j:fixture1
N2=nqn.2026-12.io.nvmf4j:fixture2
H1=nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555
H2=nqn.2014-08.org.nvmexpress:uuid:66666666-7777-8888-9999-000000000000
c POST /api/v1/bdevs '{"name":"m0","type":"malloc","blockSize":512,"numBlocks":65536}'
c POST /api/v1/bdevs '{"name":"n0","type":"null","blockSize":4096,"numBlocks":16384}'
c POST /api/v1/bdevs "{\"name\":\"f0\",\"type\":\"file\",\"blockSize\":512,\"numBlocks\":0,\"path\":\"$IMG/disk0.img\"}"
c POST /api/v1/bdevs '{"name":"base1","type":"malloc","blockSize":512,"numBlocks":8192}'
c POST /api/v1/bdevs '{"name":"e0","type":"error","base":"base1"}'
c POST /api/v1/subsystems "{\"nqn\":\"$N1\",\"serial\":\"FIXTURE0001\",\"model\":\"nvmf4j fixture\",\"allowAnyHost\":true,\"maxNamespaces\":32}"
c POST /api/v1/subsystems "{\"nqn\":\"$N2\",\"serial\":\"FIXTURE0002\",\"allowAnyHost\":false}"
c POST /api/v1/subsystems/$N1/namespaces '{"nsid":1,"bdev":"m0"}'
c POST /api/v1/subsystems/$N1/namespaces '{"nsid":2,"bdev":"n0","anaGroup":2}'
c POST /api/v1/subsystems/$N1/namespaces '{"nsid":3,"bdev":"e0"}'
c POST /api/v1/subsystems/$N2/hosts "{\"nqn\":\"$H1\"}"
c POST /api/v1/subsystems/$N2/hosts "{\"nqn\":\"$H2\",\"dhchapKey\":\"$S/keys/h2.key\"}"
c POST /api/v1/subsystems/$N2/namespaces "{\"nsid\":1,\"bdev\":\"f0\",\"hosts\":[\"$H1\"]}"
c POST /api/v1/subsystems/$N1/listeners "{\"transport\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":$TCP}"
c POST /api/v1/subsystems/$N2/listeners "{\"transport\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":$TCP2}"
c PUT /api/v1/subsystems/$N1/listeners/tcp/127.0.0.1/$TCP/ana/2 '{"state":"non-optimized"}'
c POST /api/v1/discovery/referrals '{"transport":"tcp","address":"127.0.0.2","port":4420}'
c POST /api/v1/discovery/hosts "{\"nqn\":\"$H1\",\"tlsKey\":\"$S/keys/h1.psk\"}"
c PUT /api/v1/transports/tcp '{"inCapsuleDataSize":8192}' || true
# the answers of the reads
for p in /api/v1/bdevs /api/v1/subsystems /api/v1/subsystems/$N1 /api/v1/subsystems/$N2 \
  /api/v1/subsystems/$N1/namespaces /api/v1/subsystems/$N2/hosts /api/v1/subsystems/$N1/listeners \
  /api/v1/discovery/referrals /api/v1/discovery/hosts /api/v1/transports /api/v1/config \
  /api/v1/subsystems/$N1/namespaces/2 /api/v1/bdevs/f0 /api/v1/subsystems/$N1/listeners/tcp/127.0.0.1/$TCP/ana \
  /api/v1/subsystems/$N2/namespaces/1/hosts /api/v1/subsystems/$N2/controllers; do
  f=$(echo "$p" | sed 's|/api/v1/||; s|[/:]|_|g')
  curl -sS -H "Authorization: Bearer $T" -o "$OUT/answers/$f.json" -w "$p %{http_code}\n" http://127.0.0.1:$API$p
done
kill $PID; wait $PID || true; trap - EXIT
sed "s|$S|@DIR@|g; s|\b$TCP\b|@TCP1@|g; s|\b$TCP2\b|@TCP2@|g; s|\b$API\b|@API@|g" $S/config.json > "$OUT/config.json"
for f in "$OUT"/answers/*.json; do sed -i "s|$S|@DIR@|g; s|\b$TCP\b|@TCP1@|g; s|\b$TCP2\b|@TCP2@|g; s|\b$API\b|@API@|g" "$f"; done
cp $S/keys/h2.key $S/keys/h1.psk "$OUT/"
for f in "$OUT"/answers/*.json; do   # names without the NQNs' common part and the listener's port
  n=$(basename "$f" | sed 's/nqn.2026-12.io.nvmf4j_//; s/_tcp_127.0.0.1_[0-9]*_ana/_ana/')
  [ "$n" = "$(basename "$f")" ] || mv "$f" "$OUT/answers/$n"
done
rm -rf "$S"
echo "ports: api $API tcp $TCP $TCP2; state $S"

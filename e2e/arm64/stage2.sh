#!/bin/sh
# PID 1 of the arm64 guest's one bootstrap boot (e2e/arm64/run.sh copies it into the root as
# /e2e-stage2.sh): debootstrap's second stage, natively on the emulated Arm CPU (the packages'
# maintainer scripts are arm64 programs, this machine cannot run them), then a marker the host checks.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root
echo "E2E-STAGE2: start"
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
if /debootstrap/debootstrap --second-stage; then
  echo nvmf4j-arm64 > /etc/hostname
  apt-get clean
  rm -f /var/log/*.log
  # the image's version: what run.sh prints with the results
  dpkg-query -W -f='${Package}\t${Version}\n' openjdk-17-jre-headless rdma-core nvme-cli fio > /e2e-root-versions.txt
  echo "E2E-STAGE2: OK"
  touch /e2e-stage2.ok
else
  echo "E2E-STAGE2: FAILED: $(tail -n 20 /debootstrap/debootstrap.log 2>/dev/null)"
fi
umount /dev/pts /run 2>/dev/null
# the second stage unmounts /proc at its end: the power-off below needs it
[ -e /proc/sysrq-trigger ] || mount -t proc proc /proc
sync
mount -o remount,ro / 2>/dev/null
echo o > /proc/sysrq-trigger
sleep 30

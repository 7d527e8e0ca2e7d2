package io.nvmf4j.service.api;

import io.nvmf4j.service.api.Http.Res;
import io.nvmf4j.testhost.CephCluster;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An rbd namespace made through the REST API on a real Ceph cluster ({@link CephCluster}), used by the Java
 * test host over NVMe/TCP on loopback: verified I/O, grow with the changed-namespace event, a restart with
 * the same identity and data, and bad input answered with 400 and the reason.
 */
@ExtendWith(CephCluster.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdNamespaceTest {
    private static final int FID_ASYNC_EVENT_CONFIG = 0x0B;
    private static final int AEC_NS_ATTRIBUTE = 1 << 8;
    private static final int LID_CHANGED_NS_LIST = 0x04;
    private static final int CDW12_FUA = 1 << 30;
    private static final int BS = 512;

    @TempDir
    Path dir;

    private static String rbdBdev(String name, String image, boolean create, long numBlocks) {
        CephCluster c = CephCluster.get();
        return "{\"name\":\"" + name + "\",\"type\":\"rbd\",\"pool\":\"" + c.pool() + "\",\"image\":\"" + image
            + "\",\"cephConf\":\"" + c.conf() + "\",\"clientName\":\"" + c.client() + "\",\"keyring\":\""
            + c.keyring() + "\",\"create\":" + create + ",\"numBlocks\":" + numBlocks + "}";
    }

    private static byte[] pattern(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void anRbdNamespaceServesVerifiedIoGrowsAndKeepsItsIdentityAcrossARestart() throws Exception {
        String image = "nstest-" + ProcessHandle.current().pid();
        String nguid;
        String uuid;
        int nsid;
        byte[] a = pattern(64 * 1024, 1);
        byte[] b = pattern(4096, 2);
        byte[] fua = pattern(8192, 3);
        long grownBlocks = 3L * 8192;
        try (TestService t = TestService.start(dir, TestService::allowTestCeph)) {
            Res bdev = t.http.post("/api/v1/bdevs", rbdBdev("ceph0", image, true, 16384));
            assertThat(bdev.status()).as("%s", bdev).isEqualTo(201);
            assertThat(CephCluster.get().rbd("info", CephCluster.get().pool() + "/" + image)).contains("size 8 MiB");
            Res ns = t.http.post("/api/v1/subsystems/" + Http.enc(TestService.NQN) + "/namespaces",
                "{\"bdev\":\"ceph0\"}");
            assertThat(ns.status()).as("%s", ns).isEqualTo(201);
            nsid = ns.json().get("nsid").asInt();
            nguid = ns.json().get("nguid").asText();
            uuid = ns.json().get("uuid").asText();
            try (NvmeController c = NvmeController.open("127.0.0.1", t.nvmePort, TestService.NQN,
                TestService.HOSTNQN, 30000, 1, TcpHostOptions.DEFAULT)) {
                NvmeHost io = c.io(0);
                NvmeHost admin = c.admin();
                ByteBuffer id = le(admin.identify(0x00, nsid, 0).data());
                assertThat(id.getLong(0)).as("NSZE").isEqualTo(16384);
                assertThat(id.get(33) & 1).as("DLFEAT: deallocated blocks read zeros").isEqualTo(1);
                ByteBuffer ctrl = le(admin.identify(0x01, 0, 0).data());
                assertThat(ctrl.get(525) & 1).as("VWC: none without librbd's cache (off by default)").isEqualTo(0);

                assertThat(io.write(nsid, 0, a).ok()).isTrue();
                assertThat(io.write(nsid, 8192 - 4, b).ok()).as("across the 4 MiB objects").isTrue();
                Completion w = io.executeWrite(NvmeHost.rw(NvmeHost.OPC_WRITE, nsid, 4096, fua.length / BS)
                    .cdw(12, (fua.length / BS - 1) | CDW12_FUA), fua);
                assertThat(w.ok()).as("FUA write: %s", w).isTrue();
                assertThat(io.flush(nsid).ok()).isTrue();
                assertThat(io.read(nsid, 0, a.length / BS).data()).isEqualTo(a);
                assertThat(io.read(nsid, 8192 - 4, 8).data()).isEqualTo(b);
                assertThat(io.read(nsid, 4096, 16).data()).isEqualTo(fua);
                assertThat(io.compare(nsid, 4096, fua).ok()).isTrue();
                Completion differs = io.compare(nsid, 4096, java.util.Arrays.copyOf(a, fua.length));
                assertThat(differs.sct() << 8 | differs.sc()).as("Compare Failure").isEqualTo(0x285);

                assertThat(io.deallocate(nsid, new NvmeHost.Range(3, 2)).ok()).isTrue();
                assertThat(io.writeZeroes(nsid, 40, 5).ok()).isTrue();
                byte[] back = io.read(nsid, 0, 64).data();
                for (int i = 0; i < back.length; i++) {
                    boolean zeroed = (i >= 3 * BS && i < 5 * BS) || (i >= 40 * BS && i < 45 * BS);
                    assertThat(back[i]).as("byte %d", i).isEqualTo(zeroed ? 0 : a[i]);
                }

                assertThat(admin.setFeatures(FID_ASYNC_EVENT_CONFIG, AEC_NS_ATTRIBUTE).ok()).isTrue();
                CompletableFuture<Completion> aer = admin.asyncEventRequest();
                Res grown = t.http.patch("/api/v1/bdevs/ceph0", "{\"numBlocks\":" + grownBlocks + "}");
                assertThat(grown.status()).as("%s", grown).isEqualTo(200);
                Completion event = aer.get(10, TimeUnit.SECONDS);
                assertThat((event.dw0() >>> 16) & 0xFF).as("log page").isEqualTo(LID_CHANGED_NS_LIST);
                assertThat(le(admin.getLogPage(LID_CHANGED_NS_LIST, -1, 0, 4096).data()).getInt(0)).isEqualTo(nsid);
                assertThat(le(admin.identify(0x00, nsid, 0).data()).getLong(0)).isEqualTo(grownBlocks);
                assertThat(CephCluster.get().rbd("info", CephCluster.get().pool() + "/" + image))
                    .contains("size 12 MiB");
                assertThat(io.write(nsid, grownBlocks - 8, b).ok()).as("the last blocks").isTrue();
            }
        }
        try (TestService t = TestService.restart(dir);
             NvmeController c = NvmeController.open("127.0.0.1", t.nvmePort, TestService.NQN, TestService.HOSTNQN,
                 30000, 1, TcpHostOptions.DEFAULT)) {
            ByteBuffer id = le(c.admin().identify(0x00, nsid, 0).data());
            assertThat(id.getLong(0)).isEqualTo(grownBlocks);
            byte[] g = new byte[16];
            id.get(104, g);
            assertThat(HexFormat.of().formatHex(g)).isEqualTo(nguid);
            Res ns = t.http.get("/api/v1/subsystems/" + Http.enc(TestService.NQN) + "/namespaces/" + nsid);
            assertThat(ns.json().get("uuid").asText()).isEqualTo(uuid);
            NvmeHost io = c.io(0);
            assertThat(io.read(nsid, 4096, 16).data()).isEqualTo(fua);
            assertThat(io.read(nsid, 8192 - 4, 8).data()).isEqualTo(b);
            assertThat(io.read(nsid, grownBlocks - 8, 8).data()).isEqualTo(b);
        }
    }

    @Test
    void badRbdInputIsRefusedWithTheReason() throws Exception {
        CephCluster ceph = CephCluster.get();
        try (TestService t = TestService.start(dir, TestService::allowTestCeph)) {
            Res missingPool = t.http.post("/api/v1/bdevs", rbdBdev("r1", "x", true, 2048).replace(
                "\"pool\":\"rbd\",", ""));
            assertThat(missingPool.status()).as("%s", missingPool).isEqualTo(400);
            assertThat(missingPool.body()).contains("pool: missing for an rbd bdev");

            Res absent = t.http.post("/api/v1/bdevs", rbdBdev("r2", "absent-" + ProcessHandle.current().pid(),
                false, 0));
            assertThat(absent.status()).as("%s", absent).isEqualTo(400);
            assertThat(absent.body()).contains("no image 'absent-").contains("(set create to make it)");

            Path wrong = ceph.dir().resolve("wrong-" + ProcessHandle.current().pid() + ".keyring");
            Files.writeString(wrong, "[client.nvmf4j]\n\tkey = AQBSdFVkAAAAABAAp7VDMx8oFKyW0Wm8sQXzvQ==\n");
            Res badKey = t.http.post("/api/v1/bdevs", rbdBdev("r3", "x", true, 2048).replace(ceph.keyring(),
                wrong.toString()));
            Files.delete(wrong);
            assertThat(badKey.status()).as("%s", badKey).isEqualTo(400);
            assertThat(badKey.body()).contains("cannot connect to the Ceph cluster").contains("as client.nvmf4j");

            Res relative = t.http.post("/api/v1/bdevs", rbdBdev("r4", "x", true, 2048).replace(ceph.keyring(),
                "keyring"));
            assertThat(relative.status()).isEqualTo(400);
            assertThat(relative.body()).contains("keyring: must be an absolute path");

            assertThat(t.http.get("/api/v1/bdevs/r3").status()).as("nothing was added").isEqualTo(404);
            assertThat(t.fileJson()).doesNotContain("\"rbd\"");
        }
    }

    private static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }
}

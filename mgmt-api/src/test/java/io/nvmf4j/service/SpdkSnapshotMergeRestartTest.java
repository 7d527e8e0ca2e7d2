package io.nvmf4j.service;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.it.Le;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.service.SpdkLvolService.expect;
import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A volume grown after its snapshot, whose snapshot is then deleted (SPDK merges it into the volume, its one
 * dependent), on the spdk engine's lvol pool on a file bdev, across a restart of the service: by kill -9, and by a
 * clean stop. Clusters of 64 KiB, so that one SPDK extent page (512 clusters) covers 32 MiB and a volume can reach
 * a second one. Each volume takes one path through write, snapshot, grow, write and delete:
 *
 * <ul>
 *   <li>{@code thick}: thick, written, snapshot, grown, snapshot deleted;</li>
 *   <li>{@code thin}: the same on a thin volume;</li>
 *   <li>{@code between}: as thin, and written in its old and its grown range before the delete;</li>
 *   <li>{@code after}: as thin, and written in its grown range after the delete;</li>
 *   <li>{@code far}: as thin, grown into a second extent page and written there (not in the first) before the
 *       delete;</li>
 *   <li>{@code empty}: as thin, never written.</li>
 * </ul>
 *
 * Then one more call is acknowledged (a volume made) and the service ends. After the start every volume serves at
 * its grown size, the store having it so (the start resizes nothing and finds nothing missing), with every byte a
 * host wrote and zeroes elsewhere. The delete gives a volume without an extent page of its own in a range the
 * snapshot's page there, written at the snapshot's size ({@code thick}, {@code thin}, {@code far}): SPDK reads it
 * with the rest of the range unallocated ({@code spdk-jni/spdk-patches/0002-*}).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkSnapshotMergeRestartTest {
    private static final String NQN = "nqn.2026-12.io.nvmf4j:spdk-merge";
    private static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000de";
    private static final String TOKEN = "7f".repeat(32);
    private static final long KIB = 1L << 10;
    private static final long MIB = 1L << 20;
    /** The pool's cluster size: one extent page of SPDK's (512 clusters) covers 32 MiB. */
    private static final long CLUSTER = 64 * KIB;
    /** What each write carries: one cluster. */
    private static final int CHUNK = (int) CLUSTER;
    private static final int BLOCK = 512;
    private static final String P = "/api/v1/pools/p";
    private static final String NS = "/api/v1/subsystems/" + enc(NQN) + "/namespaces";

    @TempDir
    Path dir;
    /** The service of the running test, and its API. */
    private SpdkLvolService svc;
    private Http http;
    /** The volumes by name, in nsid order. */
    private final Map<String, Vol> vols = new LinkedHashMap<>();

    /** A volume of the test: its namespace, its size and what a host wrote into it (byte offset to data). */
    private static final class Vol {
        final int nsid;
        long size;
        final Map<Long, byte[]> written = new TreeMap<>();

        Vol(int nsid, long size) {
            this.nsid = nsid;
            this.size = size;
        }
    }

    @Test
    void aGrownVolumeWhoseSnapshotWasMergedKeepsItsSizeAndDataAcrossKill9() throws Exception {
        changeThenRestart(true);
    }

    @Test
    void aGrownVolumeWhoseSnapshotWasMergedKeepsItsSizeAndDataAcrossACleanStop() throws Exception {
        changeThenRestart(false);
    }

    /** The paths of the class comment, then the end of the service ({@code kill9}, or SIGTERM), a start, the checks. */
    private void changeThenRestart(boolean kill9) throws Exception {
        SpdkRequirement.assumeBuilt();
        try (SpdkLvolService s = new SpdkLvolService(dir, NQN, TOKEN, 256 * MIB)) {
            svc = s;
            http = s.http;
            s.start();
            change();
            if (kill9) {
                s.kill();
            } else {
                s.stop();
            }
            s.start();
            check();
        }
    }

    /** The paths of the class comment, and one more call acknowledged. */
    private void change() throws Exception {
        expect(201, http.post("/api/v1/pools", "{\"name\":\"p\",\"kind\":\"lvol\",\"baseBdev\":\"f0\","
            + "\"clusterSize\":" + CLUSTER + "}"));
        int nsid = 2;
        for (String name : new String[] {"thick", "thin", "between", "after", "far", "empty"}) {
            boolean thick = name.equals("thick");
            expect(201, http.post(P + "/volumes", "{\"name\":\"" + name + "\",\"size\":" + 4 * MIB
                + (thick ? ",\"thick\":true" : "") + "}"));
            expect(201, http.post(NS, "{\"nsid\":" + nsid + ",\"bdev\":\"p/" + name + "\"}"));
            vols.put(name, new Vol(nsid++, 4 * MIB));
        }
        try (NvmeController c = host()) {
            for (String name : new String[] {"thick", "thin", "between", "after", "far"}) {
                write(c, name, 0);
                write(c, name, 3 * MIB);
            }
        }
        for (String name : vols.keySet()) {
            expect(201, http.post(P + "/volumes/" + name + "/snapshots", "{\"name\":\"s\"}"));
            grow(name, name.equals("far") ? 48 * MIB : 8 * MIB);
        }
        try (NvmeController c = host()) {
            write(c, "between", MIB);
            write(c, "between", 6 * MIB);
            write(c, "far", 40 * MIB);
        }
        for (String name : vols.keySet()) {
            expect(204, http.delete(P + "/volumes/" + name + "/snapshots/s"));
        }
        try (NvmeController c = host()) {
            write(c, "after", 6 * MIB);
        }
        expect(201, http.post(P + "/volumes", "{\"name\":\"last\",\"size\":" + MIB + "}"));
    }

    /** What the start found and what the API and a host see of each volume: see the class comment. */
    private void check() throws Exception {
        String log = svc.output();
        log.lines().filter(l -> l.contains("pool p:") || l.contains("not served")).forEach(System.out::println);
        assertThat(log.lines().filter(l -> l.contains("pool p:") && (l.contains(" lacks ") || l.contains(" holds "))
            || l.contains("not served")))
            .as("the start found the store as the document says: nothing missing, nothing of another size").isEmpty();
        for (var e : vols.entrySet()) {
            JsonNode v = expect(200, http.get(P + "/volumes/" + e.getKey())).json();
            assertThat(v.get("state").asText()).as("volume %s", e.getKey()).isEqualTo("available");
            assertThat(v.get("provisionedBytes").asLong()).as("size of %s", e.getKey()).isEqualTo(e.getValue().size);
            assertThat(v.get("snapshots")).as("snapshots of %s", e.getKey()).isEmpty();
        }
        assertThat(expect(200, http.get(P + "/volumes/last")).json().get("provisionedBytes").asLong())
            .as("the call after the deletes").isEqualTo(MIB);
        try (NvmeController c = host()) {
            for (var e : vols.entrySet()) {
                checkHost(c, e.getKey(), e.getValue());
            }
        }
    }

    private void grow(String name, long size) {
        expect(200, http.patch(P + "/volumes/" + name, "{\"size\":" + size + "}"));
        vols.get(name).size = size;
    }

    /** Writes one chunk of data of its own at byte {@code offset} of volume {@code name}, acknowledged. */
    private void write(NvmeController c, String name, long offset) {
        Vol v = vols.get(name);
        byte[] data = Le.random(CHUNK, v.nsid * 1000L + offset / CHUNK);
        assertThat(c.io(0).write(v.nsid, offset / BLOCK, data).ok()).as("write at %d of %s", offset, name).isTrue();
        v.written.put(offset, data);
    }

    /**
     * What a host sees of volume {@code name}: its size (NSZE; its last block reads, the one after is out of range),
     * each chunk written, and zeroes in the first and last chunk of its grown range where nothing was written.
     */
    private void checkHost(NvmeController c, String name, Vol v) {
        Completion id = c.admin().identify(0x00, v.nsid, 0);
        assertThat(id.ok()).as("Identify Namespace %d (%s)", v.nsid, name).isTrue();
        long blocks = v.size / BLOCK;
        assertThat(ByteBuffer.wrap(id.data()).order(ByteOrder.LITTLE_ENDIAN).getLong(0)).as("NSZE of %s", name)
            .isEqualTo(blocks);
        assertThat(c.io(0).read(v.nsid, blocks - 1, 1).ok()).as("the last block of %s", name).isTrue();
        assertThat(c.io(0).read(v.nsid, blocks, 1).sc()).as("the block after %s: LBA out of range", name)
            .isEqualTo(0x80);
        List<Long> zero = new ArrayList<>(List.of(4 * MIB, v.size - CHUNK));
        zero.removeAll(v.written.keySet());
        for (var w : v.written.entrySet()) {
            Completion r = c.io(0).read(v.nsid, w.getKey() / BLOCK, CHUNK / BLOCK);
            assertThat(r.ok()).as("read at %d of %s", w.getKey(), name).isTrue();
            assertThat(r.data()).as("what was written at %d of %s", w.getKey(), name).isEqualTo(w.getValue());
        }
        for (long at : zero) {
            Completion r = c.io(0).read(v.nsid, at / BLOCK, CHUNK / BLOCK);
            assertThat(r.ok() && Le.allZero(r.data())).as("zeroes at %d of %s", at, name).isTrue();
        }
    }

    private NvmeController host() throws java.io.IOException {
        return svc.host(HOSTNQN);
    }
}

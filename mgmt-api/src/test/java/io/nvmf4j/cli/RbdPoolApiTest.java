package io.nvmf4j.cli;

import io.nvmf4j.service.api.Http;
import io.nvmf4j.service.api.Http.Res;
import io.nvmf4j.service.api.TestService;
import io.nvmf4j.testhost.CephCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An rbd pool through the REST API and nvmfctl of a real service on a real Ceph cluster ({@link CephCluster}, a RADOS
 * pool and client of the test's own): {@code nvmfctl pool create --rados-pool}, volumes, snapshot, clone and deletes
 * answered as for any pool, a thick volume written whole, a group snapshot; and each change whose document cannot
 * be saved taken back in Ceph as well (the image back from RBD's trash, the new image, thick or thin, removed, the
 * RBD snapshot kept, a group snapshot's RBD snapshots removed), answered 500 "…; the change was undone".
 */
@ExtendWith(CephCluster.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdPoolApiTest {
    private static final long MIB = 1 << 20;
    private static final String P = "/api/v1/pools/p";
    private static final String NS = "/api/v1/subsystems/" + enc(TestService.NQN) + "/namespaces";

    @TempDir
    Path dir;
    private CephCluster.RadosPool rados;
    private TestService t;
    private Http http;

    @BeforeEach
    void start() throws Exception {
        rados = CephCluster.get().newPool("api");
        t = TestService.start(dir, TestService::allowTestCeph);
        http = t.http;
    }

    @AfterEach
    void stop() throws Exception {
        if (t != null) {
            t.close();
        }
        CephCluster.get().deletePool(rados);
    }

    private static Res expect(int status, Res r) {
        assertThat(r.status()).as("%s", r).isEqualTo(status);
        return r;
    }

    /** {@code rbd ARGS -p POOL}, one line per entry. */
    private List<String> rbd(String... args) throws Exception {
        String[] full = Arrays.copyOf(args, args.length + 2);
        full[args.length] = "-p";
        full[args.length + 1] = rados.name();
        return Arrays.stream(CephCluster.get().rbd(full).split("\n")).map(String::strip).filter(s -> !s.isEmpty())
            .toList();
    }

    @Test
    void anRbdPoolThroughNvmfctlAndRestWithItsRefusalsAndUndoneChanges() throws Exception {
        Cli cli = new Cli(Map.of(), "--url", "http://127.0.0.1:" + t.service.apiPort(), "--state-dir", t.dir.toString());
        Cli.Run created = cli.run("pool", "create", "p", "--rados-pool", rados.name(), "--ceph-conf",
            CephCluster.get().conf(), "--client", rados.client(), "--keyring", rados.keyring());
        assertThat(created.code()).as("%s", created).isZero();
        assertThat(created.out()).contains("kind                rbd\n").contains("path                " + rados.name());
        Cli.Run both = cli.run("pool", "create", "q", "--rados-pool", "x", "--path", "/tmp");
        assertThat(both.code()).as("%s", both).isEqualTo(2);
        assertThat(both.err()).contains("--path (reflink-dir) or --rados-pool (rbd), one of them");

        expect(201, http.post(P + "/volumes", "{\"name\":\"v1\",\"size\":" + 8 * MIB + "}"));
        expect(201, http.post(P + "/volumes", "{\"name\":\"v2\",\"size\":" + 8 * MIB + "}"));
        expect(201, http.post(P + "/volumes/v1/snapshots", "{\"name\":\"s1\"}"));
        expect(201, http.post(NS, "{\"nsid\":2,\"bdev\":\"p/v1\"}"));
        Res thick = expect(201, http.post(P + "/volumes", "{\"name\":\"t1\",\"size\":" + 8 * MIB
            + ",\"thick\":true}"));
        assertThat(thick.json().path("thin").asBoolean(true)).isFalse();
        assertThat(thick.json().path("allocatedBytes").asLong()).as("every object written").isEqualTo(8 * MIB);
        Res group = expect(201, http.post(P + "/group-snapshots", "{\"name\":\"g1\",\"volumes\":[\"v1\",\"t1\"]}"));
        assertThat(group.json().path("snapshots").findValuesAsText("volume")).containsExactly("v1", "t1");
        assertThat(group.json().path("snapshots").findValuesAsText("group")).containsExactly("g1", "g1");
        assertThat(CephCluster.get().rbd("snap", "ls", rados.name() + "/t1")).contains(" g1 ");
        Res twice = expect(400, http.post(P + "/group-snapshots", "{\"name\":\"g9\",\"volumes\":[\"v1\",\"v1\"]}"));
        assertThat(twice.field()).isEqualTo("volumes");

        String before = t.liveJson();
        List<String> images = rbd("ls");
        TestService.BlockedSaves blocked = t.blockSaves();
        String[][] changes = {
            {"POST", P + "/volumes", "{\"name\":\"v3\",\"size\":" + MIB + "}"},
            {"POST", P + "/volumes", "{\"name\":\"v4\",\"size\":" + 4 * MIB + ",\"thick\":true}"},
            {"DELETE", P + "/volumes/v2", null},
            {"POST", P + "/volumes/v1/snapshots", "{\"name\":\"s2\"}"},
            {"POST", P + "/group-snapshots", "{\"name\":\"s2\",\"volumes\":[\"v1\",\"v2\"]}"},
            {"POST", P + "/volumes/v1/snapshots/s1/clone", "{\"name\":\"c1\"}"},
            {"DELETE", P + "/volumes/v1/snapshots/s1", null},
        };
        for (String[] c : changes) {
            Res r = http.send(c[0], c[1], c[2], c[2] == null ? null : "application/json");
            assertThat(r.status()).as("%s %s -> %s", c[0], c[1], r).isEqualTo(500);
            assertThat(r.error()).as("%s %s", c[0], c[1]).endsWith("; the change was undone");
            assertThat(t.liveJson()).as("%s %s: the document", c[0], c[1]).isEqualTo(before);
            assertThat(rbd("ls")).as("%s %s: the images", c[0], c[1]).isEqualTo(images);
            assertThat(rbd("trash", "ls")).as("%s %s: RBD's trash", c[0], c[1]).isEmpty();
            assertThat(CephCluster.get().rbd("snap", "ls", rados.name() + "/v1")).as("%s %s", c[0], c[1])
                .contains(" s1 ").doesNotContain(" s2 ");
            assertThat(CephCluster.get().rbd("snap", "ls", rados.name() + "/v2")).as("%s %s", c[0], c[1])
                .doesNotContain(" s2 ");
        }
        blocked.close();

        // served on as the document says: the volume whose delete was undone takes a namespace, and each change
        // succeeds once the document can be saved
        expect(201, http.post(NS, "{\"nsid\":3,\"bdev\":\"p/v2\"}"));
        expect(201, http.post(P + "/volumes/v1/snapshots/s1/clone", "{\"name\":\"c1\"}"));
        expect(409, http.delete(P + "/volumes/v1/snapshots/s1"));
        expect(204, http.delete(NS + "/3"));
        expect(204, http.delete(P + "/volumes/c1"));
        expect(204, http.delete(P + "/volumes/v1/snapshots/s1"));
        expect(204, http.delete(NS + "/2"));
        expect(409, http.delete(P + "/volumes/t1"));
        expect(204, http.delete(P + "/volumes/v1/snapshots/g1"));
        expect(204, http.delete(P + "/volumes/t1/snapshots/g1"));
        expect(204, http.delete(P + "/volumes/v1"));
        expect(204, http.delete(P + "/volumes/v2"));
        expect(204, http.delete(P + "/volumes/t1"));
        expect(204, http.delete(P));
        assertThat(rbd("ls")).isEmpty();
        assertThat(rbd("trash", "ls")).isEmpty();
        assertThat(t.fileJson()).isEqualTo(t.liveJson());
    }
}

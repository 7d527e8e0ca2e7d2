package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.cli.Cli.Run;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.service.api.PoolService;
import io.nvmf4j.service.api.TestService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code nvmfctl pool|volume|snapshot} in-process against the service in-process, on a real XFS made with
 * {@code reflink=1} (root; skipped where mkfs.xfs or losetup is missing): each subcommand with its table and --json
 * output, and the API's refusals as exit code 1.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NvmfctlPoolTest {
    @TempDir
    Path tmp;
    private PoolService pools;
    private Path poolDir;
    private Cli cli;

    @BeforeEach
    void start() throws Exception {
        pools = PoolService.start(tmp);
        poolDir = pools.poolDir;
        TestService t = pools.service;
        cli = new Cli(Map.of(), "--url", "http://127.0.0.1:" + t.service.apiPort(), "--state-dir", t.dir.toString());
    }

    @AfterEach
    void stop() throws Exception {
        if (pools != null) {
            pools.close();
        }
    }

    private Run ok(String... args) {
        Run r = cli.run(args);
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(r.err()).as("%s", r).isEmpty();
        return r;
    }

    private Run fails(String... args) {
        Run r = cli.run(args);
        assertThat(r.code()).as("%s", r).isEqualTo(1);
        assertThat(r.err()).as("%s", r).doesNotContain("Exception").doesNotContain("\tat ");
        return r;
    }

    private static JsonNode json(Run r) {
        return Http.parse(r.out());
    }

    @Test
    void poolVolumeSnapshotCloneResizeDelete() {
        assertThat(ok("pool", "create", "p1", "--path", poolDir.toString(), "--warn-percent", "90").out())
            .startsWith("name                p1\nkind                reflink-dir\npath                " + poolDir + "\n")
            .contains("warnPercent         90\n").contains("volumes             0\n");
        assertThat(ok("pool", "list").out()).containsPattern("^NAME +KIND +SIZE +USED +FREE +WARN +CROSSINGS +VOLUMES"
            + " +PATH\n").containsPattern("\np1 +reflink-dir +\\d+(\\.\\d)? MiB .* 90% +0 +0 +" + poolDir + "\n");
        assertThat(json(ok("pool", "get", "p1", "--json")).get("kind").asText()).isEqualTo("reflink-dir");

        assertThat(ok("volume", "create", "-p", "p1", "v1", "--size", "64M").out())
            .startsWith("pool              p1\nname              v1\nbdev              p1/v1\nblockSize         512\n"
                + "provisionedBytes  67108864\n");
        JsonNode v2 = json(ok("--json", "volume", "create", "--pool", "p1", "v2", "--size", "8M", "--block-size", "4096",
            "--thick"));
        assertThat(v2.get("thin").asBoolean()).isFalse();
        assertThat(v2.get("allocatedBytes").asLong()).isGreaterThanOrEqualTo(8L << 20);
        ok("ns", "add", "-n", TestService.NQN, "-b", "p1/v1", "--nsid", "5");

        Run snap = ok("snapshot", "create", "-p", "p1", "--volume", "v1", "s1");
        assertThat(snap.out()).containsPattern("^VOLUME +SNAPSHOT +SIZE +CREATED\nv1 +s1 +64 MiB +\\S+\n"
            + "writes held for \\d+ us\n");
        assertThat(ok("snapshot", "clone", "-p", "p1", "--volume", "v1", "s1", "c1").out())
            .contains("origin            v1@s1\n");
        assertThat(ok("snapshot", "list", "-p", "p1", "--volume", "v1").out())
            .containsPattern("^NAME +SIZE +ALLOCATED +CREATED +GROUP +CLONES\ns1 +64 MiB +\\S+ B? ?\\S* +\\S+ +- +c1\n");
        JsonNode group = json(ok("snapshot", "group", "-p", "p1", "g1", "v1", "v2", "--json"));
        assertThat(group.get("snapshots").findValuesAsText("volume")).containsExactly("v1", "v2");
        assertThat(group.get("snapshots").findValuesAsText("group")).containsExactly("g1", "g1");

        assertThat(ok("volume", "resize", "-p", "p1", "v1", "--size", "128M").out())
            .contains("provisionedBytes  134217728\n");
        assertThat(fails("volume", "resize", "-p", "p1", "v1", "--size", "32M").err()).contains("backs namespace");

        assertThat(ok("volume", "list", "-p", "p1").out()).containsPattern(
            "^NAME +SIZE +ALLOCATED +THIN +ORIGIN +SNAPSHOTS +NAMESPACE\n"
                + "v1 +128 MiB +.+ +yes +- +2 +" + TestService.NQN.replace(".", "\\.") + "/5\n"
                + "v2 +8 MiB +.+ +no +- +1 +-\n"
                + "c1 +64 MiB +.+ +yes +v1@s1 +0 +-\n");
        assertThat(ok("volume", "get", "-p", "p1", "c1").out()).contains("origin            v1@s1\n");
        String tree = ok("ls").out();
        assertThat(tree).contains("| o- 5 [bdev p1/v1, 128 MiB, uuid ")
            .containsPattern("\n  o- pools \\[1]\n  \\| o- p1 \\[reflink-dir, \\d+ MiB, .+ used, .+ free, "
                + poolDir + "]\n"
                + "  \\|   o- v1 \\[128 MiB, thin, .+ allocated, snapshots s1, g1, used by "
                + TestService.NQN.replace(".", "\\.") + "/5]\n"
                + "  \\|   o- v2 \\[8 MiB, thick, .+ allocated, snapshots g1, unused]\n"
                + "  \\|   o- c1 \\[64 MiB, thin, .+ allocated, clone of v1@s1, unused]\n"
                + "  o- referrals");
        assertThat(json(ok("ls", "--json")).get("pools").get(0).get("volumes").findValuesAsText("name"))
            .containsExactly("v1", "v2", "c1");

        assertThat(fails("snapshot", "delete", "-p", "p1", "--volume", "v1", "s1").err()).contains("has clone(s) [c1]");
        assertThat(fails("volume", "delete", "-p", "p1", "v1").err()).contains("backs namespace");
        assertThat(fails("pool", "delete", "p1").err()).contains("still has volume(s)");
        assertThat(fails("volume", "get", "-p", "p1", "zz").err()).contains("no volume zz in pool p1");

        assertThat(ok("volume", "delete", "-p", "p1", "c1").out()).isEqualTo("deleted volume c1 of pool p1\n");
        assertThat(ok("snapshot", "delete", "-p", "p1", "--volume", "v1", "s1").out())
            .isEqualTo("deleted snapshot v1@s1 of pool p1\n");
        assertThat(json(ok("snapshot", "delete", "-p", "p1", "--volume", "v1", "g1", "--json"))).isEqualTo(Http.parse(
            "{\"deleted\":{\"pool\":\"p1\",\"volume\":\"v1\",\"snapshot\":\"g1\"}}"));
        ok("snapshot", "delete", "-p", "p1", "--volume", "v2", "g1");
        ok("ns", "remove", "-n", TestService.NQN, "--nsid", "5");
        assertThat(json(ok("volume", "delete", "-p", "p1", "v1", "--json"))).isEqualTo(Http.parse(
            "{\"deleted\":{\"pool\":\"p1\",\"volume\":\"v1\"}}"));
        ok("volume", "delete", "-p", "p1", "v2");
        assertThat(ok("pool", "delete", "p1").out()).isEqualTo("deleted pool p1\n");
        assertThat(json(ok("pool", "list", "--json"))).isEmpty();
    }
}

package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.cli.Cli.Run;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.service.api.TestService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** nvmfctl qos against the service in-process: set, show and remove each kind of limit, groups, refusals. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NvmfctlQosTest {
    private static final String NQN = TestService.NQN;
    private static final String HOST = TestService.HOSTNQN;
    @TempDir
    static Path dir;
    private static TestService t;
    private static Cli cli;

    @BeforeAll
    static void start() throws Exception {
        t = TestService.start(dir.resolve("state"), c -> { });
        cli = new Cli(Map.of(), "--url", "http://127.0.0.1:" + t.service.apiPort(), "--state-dir", t.dir.toString());
    }

    @AfterAll
    static void stop() {
        t.close();
    }

    private static Run ok(String... args) {
        Run r = cli.run(args);
        assertThat(r.code()).as("%s", r).isZero();
        return r;
    }

    private static JsonNode saved() {
        return Http.parse(t.fileJson());
    }

    @Test
    void eachKindOfLimitIsSetShownAndRemoved() {
        ok("qos", "set", "-n", NQN, "--nsid", "1", "--iops", "20000", "--rw-mbps", "200");
        ok("qos", "set", "-n", NQN, "--nsid", "1", "-q", HOST, "--read-mbps", "50");
        ok("qos", "set", "-n", NQN, "-q", HOST, "--write-mbps", "30");
        JsonNode shown = Http.parse(ok("qos", "show", "-n", NQN, "--nsid", "1").out());
        assertThat(shown).isEqualTo(Http.parse("{\"iops\":20000,\"rwMBps\":200,\"hosts\":[{\"hostNqn\":\"" + HOST
            + "\",\"limits\":{\"readMBps\":50}}]}"));
        assertThat(saved().get("subsystems").get(0).get("namespaces").get(0).get("qos")).isEqualTo(shown);
        assertThat(Http.parse(ok("qos", "show", "-n", NQN).out())).isEqualTo(Http.parse("{\"hosts\":[{\"hostNqn\":\""
            + HOST + "\",\"limits\":{\"writeMBps\":30}}]}"));

        ok("qos", "group-add", "tenant", "--ns", NQN + "/1", "--iops", "1000");
        assertThat(ok("qos", "group-list").out()).contains("tenant").contains(NQN + "/1");
        ok("qos", "group-set", "tenant", "--ns", NQN + "/1", "--iops", "2000");
        assertThat(saved().get("qosGroups").get(0).get("limits").get("iops").asLong()).isEqualTo(2000);

        Run refused = cli.run("qos", "set", "-n", NQN, "--nsid", "1", "--iops", "-1");
        assertThat(refused.code()).as("%s", refused).isEqualTo(1);
        assertThat(refused.err()).contains("iops: must be 0..9223372036854775807");
        Run usage = cli.run("qos", "set", "-n", NQN, "--iops", "5");
        assertThat(usage.code()).as("%s", usage).isEqualTo(2);
        assertThat(usage.err()).contains("a subsystem's QoS limits hosts only");

        ok("qos", "group-remove", "tenant");
        ok("qos", "remove", "-n", NQN, "-q", HOST);
        ok("qos", "remove", "-n", NQN, "--nsid", "1", "-q", HOST);
        ok("qos", "remove", "-n", NQN, "--nsid", "1");
        JsonNode after = saved();
        assertThat(after.has("qosGroups")).isFalse();
        assertThat(after.get("subsystems").get(0).has("qos")).isFalse();
        assertThat(after.get("subsystems").get(0).get("namespaces").get(0).has("qos")).isFalse();
    }
}

package io.nvmf4j.service.api;

import io.nvmf4j.config.NamespaceConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/** Per-host masking through REST: each refusal names its field, accepted changes are live and persisted. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NamespaceMaskingApiTest {
    private static final String HOST_A = "nqn.2014-08.org.nvmexpress:uuid:0b7e5a10-0000-4000-8000-00000000000a";
    private static final String HOST_B = "nqn.2014-08.org.nvmexpress:uuid:0b7e5a10-0000-4000-8000-00000000000b";

    @TempDir
    static Path dir;
    private static TestService t;
    private static String ns;

    @BeforeAll
    static void start() throws Exception {
        t = TestService.start(dir.resolve("state"), c -> { });
        ns = "/api/v1/subsystems/" + enc(TestService.NQN) + "/namespaces";
        assertThat(t.http.post("/api/v1/bdevs", "{\"name\": \"mk0\", \"type\": \"null\", \"numBlocks\": 64}").status())
            .isEqualTo(201);
    }

    @AfterAll
    static void stop() {
        if (t != null) {
            t.close();
        }
    }

    private static NamespaceConfig live(int nsid) {
        return t.service.target().configSnapshot().subsystems.get(0).namespaces.stream().filter(n -> n.nsid == nsid)
            .findFirst().orElseThrow();
    }

    @Test
    void hostsOfAMaskedNamespaceAreAddedAndRemovedOneByOne() {
        Http.Res r = t.http.post(ns, "{\"nsid\": 7, \"bdev\": \"mk0\", \"hosts\": [\"no-nqn\"]}");
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.field()).isEqualTo("hosts[0]");
        r = t.http.post(ns, "{\"nsid\": 7, \"bdev\": \"mk0\", \"hosts\": [\"" + HOST_A + "\", \"" + HOST_A + "\"]}");
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.field()).isEqualTo("hosts[1]");
        assertThat(r.error()).isEqualTo("hosts[1]: duplicate host " + HOST_A);

        r = t.http.post(ns, "{\"nsid\": 7, \"bdev\": \"mk0\", \"hosts\": [\"" + HOST_A + "\"]}");
        assertThat(r.status()).as("%s", r).isEqualTo(201);
        assertThat(t.http.get(ns + "/7/hosts").json()).hasSize(1);

        r = t.http.post(ns + "/1/hosts", "{\"nqn\": \"" + HOST_B + "\"}");
        assertThat(r.status()).as("a namespace visible to all: %s", r).isEqualTo(400);
        assertThat(r.field()).isEqualTo("hosts");
        assertThat(r.error()).startsWith("hosts: namespace 1 of " + TestService.NQN + " is visible to every host");
        assertThat(t.http.get(ns + "/1/hosts").body()).isEqualTo("null");

        r = t.http.post(ns + "/7/hosts", "{\"nqn\": \"not an nqn\"}");
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.field()).isEqualTo("nqn");
        r = t.http.post(ns + "/7/hosts", "{}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.error()).isEqualTo("nqn: missing");
        assertThat(t.http.post(ns + "/7/hosts", "{\"nqn\": \"" + HOST_A + "\"}").status()).isEqualTo(409);
        assertThat(t.http.delete(ns + "/7/hosts/" + enc(HOST_B)).status()).isEqualTo(404);
        assertThat(t.http.post(ns + "/8/hosts", "{\"nqn\": \"" + HOST_B + "\"}").status()).isEqualTo(404);

        r = t.http.post(ns + "/7/hosts", "{\"nqn\": \"" + HOST_B + "\"}");
        assertThat(r.status()).as("%s", r).isEqualTo(201);
        assertThat(live(7).hosts).containsExactly(HOST_A, HOST_B);
        assertThat(t.http.delete(ns + "/7/hosts/" + enc(HOST_A)).status()).isEqualTo(204);
        assertThat(live(7).hosts).containsExactly(HOST_B);
        assertThat(Http.parse(t.fileJson()).get("subsystems").get(0).get("namespaces").findValue("hosts").toString())
            .as("persisted").isEqualTo("[\"" + HOST_B + "\"]");
        assertThat(t.http.delete(ns + "/7").status()).isEqualTo(204);
    }
}

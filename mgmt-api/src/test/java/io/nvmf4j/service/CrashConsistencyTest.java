package io.nvmf4j.service;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.service.api.TestService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kill -9 of the service during a burst of concurrent changes: the file left behind parses, validates
 * and holds every acknowledged change, and nothing that was never asked for.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CrashConsistencyTest {
    private static final String TOKEN = "crash-test-token-0123456789";
    private static final int THREADS = 5;
    private static final int PER_THREAD = 10;

    @TempDir
    Path dir;

    @Test
    void theFileAfterKill9HoldsEveryAcknowledgedChange() throws Exception {
        TargetConfig c = TestService.baseConfig();
        c.api.token = TOKEN;
        Path file = dir.resolve("config.json");
        ConfigStore.save(file, c);
        ServiceProcess s = ServiceProcess.start(dir, dir.resolve("service.log"), "--state-dir", dir.toString(),
            "--config", file.toString());
        Process p = s.process;
        try {
            String apiLine = ServiceProcess.apiLine(c.api.port, file);
            assertThat(s.awaitLine(l -> l.contains(apiLine), 20_000)).as("log:%n%s", s.output()).isTrue();
            assertThat(s.output()).doesNotContain(TOKEN);

            Http http = new Http(c.api.port, TOKEN);
            Set<String> ackedBdevs = ConcurrentHashMap.newKeySet();
            Set<String> ackedNamespaces = ConcurrentHashMap.newKeySet();  // "nsid/bdev"
            AtomicInteger acks = new AtomicInteger();
            CountDownLatch enough = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < THREADS; w++) {
                int worker = w;
                Thread th = new Thread(() -> {
                    for (int i = 0; i < PER_THREAD; i++) {
                        String name = "b" + worker + "-" + i;
                        try {
                            Http.Res b = http.post("/api/v1/bdevs", "{\"name\":\"" + name
                                + "\",\"type\":\"null\",\"numBlocks\":1000}");
                            if (b.status() != 201) {
                                return;
                            }
                            ackedBdevs.add(name);
                            Http.Res n = http.post("/api/v1/subsystems/" + Http.enc(TestService.NQN) + "/namespaces",
                                "{\"bdev\":\"" + name + "\"}");
                            if (n.status() != 201) {
                                return;
                            }
                            ackedNamespaces.add(n.json().get("nsid").asInt() + "/" + name);
                            if (acks.addAndGet(2) == 40) {
                                // SIGKILL mid-burst, from the thread that saw the 40th acknowledgement: the main
                                // thread, woken late on a busy machine, could find the burst over
                                p.destroyForcibly();
                                enough.countDown();
                            }
                        } catch (RuntimeException e) {
                            return;  // the service is gone
                        }
                    }
                }, "burst-" + w);
                workers.add(th);
                th.start();
            }
            assertThat(enough.await(30, TimeUnit.SECONDS)).as("40 changes acknowledged").isTrue();
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
            for (Thread th : workers) {
                th.join(20_000);
            }
            Set<String> ackedB = Set.copyOf(ackedBdevs);
            Set<String> ackedN = Set.copyOf(ackedNamespaces);

            TargetConfig left = ConfigStore.load(file);  // parses
            ConfigValidator.validate(left);                // and validates
            List<String> bdevs = left.bdevs.stream().map(b -> b.name).toList();
            List<String> namespaces = left.subsystems.get(0).namespaces.stream()
                .map(n -> n.nsid + "/" + n.bdev).toList();
            assertThat(bdevs).as("every acknowledged bdev is in the file").containsAll(ackedB);
            assertThat(namespaces).as("every acknowledged namespace is in the file").containsAll(ackedN);
            assertThat(bdevs.get(0)).isEqualTo("m0");
            for (BdevConfig b : left.bdevs.subList(1, left.bdevs.size())) {
                assertThat(b.name).as("only bdevs that were asked for").matches("b[0-4]-\\d");
            }
            for (NamespaceConfig n : left.subsystems.get(0).namespaces.subList(1, namespaces.size())) {
                assertThat(n.bdev).matches("b[0-4]-\\d");
                assertThat(n.nguid).matches("[0-9a-f]{32}");
            }
            // each worker has at most one request outstanding: saved but not yet answered when the process died
            assertThat(bdevs.size() - 1 + namespaces.size() - 1 - ackedB.size() - ackedN.size())
                .as("unacknowledged changes in the file").isBetween(0, THREADS);
            assertThat(ackedB.size() + ackedN.size()).as("killed mid-burst").isLessThan(2 * THREADS * PER_THREAD);
        } finally {
            p.destroyForcibly();
        }
    }
}

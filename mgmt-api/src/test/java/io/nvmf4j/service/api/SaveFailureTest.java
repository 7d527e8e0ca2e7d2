package io.nvmf4j.service.api;

import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.config.ApiConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.api.Http.Res;
import io.nvmf4j.service.state.ConfigService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** When the file cannot be written the live change is undone and the API answers 500 with the reason. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SaveFailureTest {
    @TempDir
    Path dir;
    private ConfigController<JavaEngine> target;
    private ConfigService service;
    private ApiServer api;
    private Http http;
    private volatile boolean diskFull;

    @BeforeEach
    void start() throws Exception {
        TargetConfig c = TestService.baseConfig();
        target = JavaEngine.start(c);
        service = new ConfigService(target, dir.resolve("config.json"), (file, doc) -> {
            if (diskFull) {
                throw new IOException("No space left on device");
            }
            ConfigStore.save(file, doc);
        });
        ApiConfig a = c.api;
        a.token = "0123456789abcdef0123";
        api = ApiServer.start(a, ApiToken.resolve(a, dir, dir.resolve("config.json")), service, null, () -> true);
        http = new Http(api.port(), a.token);
    }

    @AfterEach
    void stop() {
        api.close();
        service.close();
        target.close();
    }

    private void assertUndone(Res r, String before) {
        assertThat(r.status()).as("%s", r).isEqualTo(500);
        assertThat(r.error()).isEqualTo("cannot save the configuration to " + dir.resolve("config.json")
            + " (No space left on device); the change was undone");
        assertThat(ConfigStore.toJson(target.configSnapshot())).isEqualTo(before);
    }

    @Test
    void everyKindOfChangeIsUndone() {
        String nqn = "/api/v1/subsystems/" + Http.enc(TestService.NQN);
        diskFull = true;
        String before = ConfigStore.toJson(target.configSnapshot());
        assertUndone(http.post("/api/v1/bdevs", "{\"name\":\"n1\",\"type\":\"null\",\"numBlocks\":8}"), before);
        assertUndone(http.delete(nqn + "/namespaces/1"), before);
        assertUndone(http.post(nqn + "/hosts", "{\"nqn\":\"" + TestService.HOSTNQN + "\"}"), before);
        assertUndone(http.patch(nqn, "{\"allowAnyHost\":false}"), before);
        assertUndone(http.put("/api/v1/transports/tcp", "{\"maxQueueDepth\":64}"), before);
        assertUndone(http.delete(nqn), before);
        TargetConfig want = target.configSnapshot();
        want.subsystems.clear();
        assertUndone(http.put("/api/v1/config", ConfigStore.toJson(want)), before);
        assertThat(target.engine().target().subsystem(TestService.NQN)).isNotNull();

        Res grow = http.patch("/api/v1/bdevs/zz", "{\"numBlocks\":9}");
        assertThat(grow.status()).isEqualTo(404);
        diskFull = false;
        assertThat(http.post("/api/v1/bdevs", "{\"name\":\"n1\",\"type\":\"null\",\"numBlocks\":8}").status())
            .isEqualTo(201);
        diskFull = true;
        Res g = http.patch("/api/v1/bdevs/n1", "{\"numBlocks\":16}");
        assertThat(g.status()).isEqualTo(500);
        assertThat(g.error()).isEqualTo("cannot save the configuration to " + dir.resolve("config.json")
            + " (No space left on device); nothing was changed");
        assertThat(target.configSnapshot().bdev("n1").numBlocks).isEqualTo(8);
    }
}

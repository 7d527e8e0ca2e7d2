package io.nvmf4j.service.api;

import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.Service;
import io.nvmf4j.service.api.Http.Res;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the management API exposes to a client or a local user, over real sockets on loopback: slow clients are
 * disconnected within the configured bounds while other clients are served; a plaintext API off loopback is refused
 * unless allowed explicitly; a token file others may read is refused; an rbd bdev's Ceph config and keyring must lie
 * under {@code storage.cephDirectories}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ApiExposureTest {
    /** How long a test waits for the server to close a connection it should close after 1 s. */
    private static final int CLOSE_WITHIN_MS = 10_000;

    @TempDir
    Path dir;

    private static TestService fastTimeouts(Path dir) throws IOException {
        return TestService.start(dir, c -> {
            c.api.requestTimeoutSeconds = 1;
            c.api.idleTimeoutSeconds = 1;
        });
    }

    @Test
    void aClientSendingHalfARequestHeadIsDisconnectedWhileOthersAreServed() throws Exception {
        try (TestService t = fastTimeouts(dir);
             Socket slow = new Socket(InetAddress.getLoopbackAddress(), t.service.apiPort())) {
            send(slow, "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
            long start = System.nanoTime();
            assertThat(t.http.get("/api/v1/bdevs").status()).as("another client meanwhile").isEqualTo(200);
            assertThat(readToEnd(slow)).as("what the server sent the slow client before closing").isEmpty();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("ms until closed")
                .isLessThan(CLOSE_WITHIN_MS);
        }
    }

    @Test
    void aClientSendingPartOfABodyGets408AndIsDisconnected() throws Exception {
        try (TestService t = fastTimeouts(dir);
             Socket slow = new Socket(InetAddress.getLoopbackAddress(), t.service.apiPort())) {
            send(slow, "POST /api/v1/bdevs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                + t.service.apiToken().value() + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                + "{\"name\":");
            String answer = readToEnd(slow);
            assertThat(answer).startsWith("HTTP/1.1 408 ")
                .contains("request body not received within 1 s of its head");
            assertThat(t.http.get("/api/v1/bdevs").status()).as("another client afterwards").isEqualTo(200);
        }
    }

    @Test
    void anIdleKeepAliveConnectionIsClosedAfterTheIdleBound() throws Exception {
        try (TestService t = fastTimeouts(dir);
             Socket idle = new Socket(InetAddress.getLoopbackAddress(), t.service.apiPort())) {
            send(idle, "GET /api/v1/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            String answer = readToEnd(idle);
            assertThat(answer).as("the response, then the close").startsWith("HTTP/1.1 200 ").contains("UP");
        }
    }

    @Test
    void aPlaintextApiOffLoopbackIsRefusedUnlessAllowed() {
        TargetConfig c = TestService.baseConfig();
        c.storage = StorageConfig.directories(dir.toString());
        c.api.address = "0.0.0.0";
        assertThatThrownBy(() -> ConfigValidator.validate(c)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("api.address: 0.0.0.0 is not a loopback address and the API has no TLS, so the "
                + "bearer token would cross the network in clear text; give api.tlsCert and api.tlsKey, bind a "
                + "loopback address, or set api.allowPlaintext to true");
        c.api.allowPlaintext = true;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        c.api.allowPlaintext = null;
        c.api.address = "::1";
        assertThatCode(() -> ConfigValidator.validate(c)).as("loopback").doesNotThrowAnyException();
    }

    @Test
    void aTokenFileOthersMayReadIsRefused() throws Exception {
        Path token = dir.resolve(ApiToken.FILE_NAME);
        Files.writeString(token, "0123456789abcdef0123456789abcdef\n");
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-r--r--"));
        TargetConfig c = TestService.baseConfig();
        ConfigStore.save(dir.resolve("config.json"), c);
        assertThatThrownBy(() -> Service.start(dir, dir.resolve("config.json")).close())
            .isInstanceOf(IOException.class)
            .hasMessage(token + ": the API token file is mode rw-r--r--, owner " + System.getProperty("user.name")
                + "; it must be rw------- and owned by " + System.getProperty("user.name") + " (others may have read "
                + "the token): delete it to have a new token made at the next start, or chmod 600 it if nobody else "
                + "could read it");
        assertThat(Files.getPosixFilePermissions(token)).as("left as it was")
            .isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));

        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        try (TestService t = TestService.restart(dir)) {
            assertThat(t.service.apiToken().value()).isEqualTo("0123456789abcdef0123456789abcdef");
        }
    }

    @Test
    void aCephConfOrKeyringOutsideTheCephDirectoriesIsRefusedNamingTheField() throws Exception {
        Path outside = Files.writeString(dir.resolve("ceph.conf"), "[global]\nmon host = 127.0.0.1\n");
        try (TestService t = TestService.start(dir, c -> { })) {
            Res conf = t.http.post("/api/v1/bdevs", rbd("r1", outside.toString(), null));
            assertThat(conf.status()).as("%s", conf).isEqualTo(400);
            assertThat(conf.field()).isEqualTo("cephConf");
            assertThat(conf.error()).contains("cephConf: " + outside + " is outside storage.cephDirectories "
                + "[/etc/ceph]; an rbd bdev's Ceph config and keyring must lie in one of them");

            Path key = dir.resolve("keys").resolve("id_rsa"); // a private key elsewhere on the machine
            Res keyring = t.http.post("/api/v1/bdevs", rbd("r2", null, key.toString()));
            assertThat(keyring.status()).as("%s", keyring).isEqualTo(400);
            assertThat(keyring.field()).isEqualTo("keyring");
            assertThat(keyring.error()).contains("keyring: " + key + " is outside storage.cephDirectories");
            assertThat(t.http.get("/api/v1/bdevs/r1").status()).as("nothing added").isEqualTo(404);
        }
    }

    private static String rbd(String name, String cephConf, String keyring) {
        return "{\"name\":\"" + name + "\",\"type\":\"rbd\",\"pool\":\"p\",\"image\":\"i\",\"numBlocks\":2048"
            + (cephConf == null ? "" : ",\"cephConf\":\"" + cephConf + "\"")
            + (keyring == null ? "" : ",\"keyring\":\"" + keyring + "\"") + "}";
    }

    private static void send(Socket s, String text) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(text.getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** Everything the server sends until it closes the connection; fails if it does not within the bound. */
    private static String readToEnd(Socket s) throws IOException {
        s.setSoTimeout(CLOSE_WITHIN_MS);
        InputStream in = s.getInputStream();
        StringBuilder b = new StringBuilder();
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                b.append(new String(buf, 0, n, StandardCharsets.US_ASCII));
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server did not close the connection within " + CLOSE_WITHIN_MS
                + " ms; it sent: " + b);
        }
        return b.toString();
    }
}

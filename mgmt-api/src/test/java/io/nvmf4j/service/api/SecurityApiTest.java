package io.nvmf4j.service.api;

import ch.qos.logback.classic.spi.ILoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmf4j.it.LogCapture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The newcomer's findings through the API: a file bdev on /etc/passwd, through a symbolic link or on a device
 * nobody listed is refused (400 naming {@code path}); the token never leaves the service and an exported document
 * put back keeps it; {@code storage} cannot be changed through the API; every change request leaves an audit line.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SecurityApiTest {
    private static final String TOKEN = "a-token-that-must-never-leave-0123456789";

    @TempDir
    static Path dir;
    private static TestService t;

    @BeforeAll
    static void start() throws Exception {
        t = TestService.start(dir.resolve("state"), c -> c.api.token = TOKEN);
    }

    @AfterAll
    static void stop() {
        if (t != null) {
            t.close();
        }
    }

    private static String fileBdev(String name, String path) {
        return "{\"name\": \"" + name + "\", \"type\": \"file\", \"numBlocks\": 64, \"path\": \"" + path + "\"}";
    }

    @Test
    void theServiceAllowsItsImagesDirectoryByDefaultAndSaysSoInTheFile() throws Exception {
        JsonNode storage = Http.parse(t.fileJson()).get("storage");
        assertThat(storage).isEqualTo(Http.parse("{\"fileDirectories\": [\"" + images() + "\"], "
            + "\"blockDevices\": [], \"cephDirectories\": [\"/etc/ceph\"]}"));
        assertThat(Files.getPosixFilePermissions(images())).isEqualTo(PosixFilePermissions.fromString("rwx------"));
    }

    @Test
    void theServicesOwnFilesCannotBecomeANamespace() {
        // the state directory holds the config (with the token), the API token and the reservation files
        for (String own : new String[] {"config.json", "api-token", "reservation-0.json"}) {
            Http.Res r = t.http.post("/api/v1/bdevs", fileBdev("own0", t.dir.toAbsolutePath().resolve(own).toString()));
            assertThat(r.status()).as("%s: %s", own, r).isEqualTo(400);
            assertThat(r.field()).isEqualTo("path");
            assertThat(r.error()).contains("is outside storage.fileDirectories [" + images() + "]");
        }
    }

    private static Path images() {
        return t.dir.toAbsolutePath().resolve("images");
    }

    @Test
    void aFileBdevOutsideTheAllowedPlacesIsRefused() throws Exception {
        long size = Files.size(Path.of("/etc/passwd"));
        Http.Res r = t.http.post("/api/v1/bdevs", fileBdev("evil0", "/etc/passwd"));
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.field()).isEqualTo("path");
        assertThat(r.error()).startsWith("path: /etc/passwd is outside storage.fileDirectories [" + images() + "]");

        Path link = Files.createSymbolicLink(images().resolve("passwd.img"), Path.of("/etc/passwd"));
        r = t.http.post("/api/v1/bdevs", fileBdev("evil1", link.toString()));
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.field()).isEqualTo("path");
        assertThat(r.error()).startsWith("path: " + link + " is a symbolic link");

        r = t.http.post("/api/v1/bdevs", fileBdev("evil2", "/dev/loop0"));
        assertThat(r.status()).as("a device nobody listed: %s", r).isEqualTo(400);
        assertThat(r.field()).isEqualTo("path");
        assertThat(r.error()).startsWith("path: /dev/loop0 is outside storage.fileDirectories");

        r = t.http.post("/api/v1/bdevs", fileBdev("new0", images().resolve("nosuch/new0.img").toString()));
        assertThat(r.status()).as("a missing directory: %s", r).isEqualTo(400);
        assertThat(r.error()).contains("does not exist; nvmf4j creates no directories");
        assertThat(images().resolve("nosuch")).doesNotExist();

        assertThat(Files.size(Path.of("/etc/passwd"))).as("/etc/passwd untouched").isEqualTo(size);
        assertThat(t.http.get("/api/v1/bdevs").body()).doesNotContain("evil");

        Path img = images().resolve("ok0.img");
        r = t.http.post("/api/v1/bdevs", fileBdev("ok0", img.toString()));
        assertThat(r.status()).as("in the images directory: %s", r).isEqualTo(201);
        assertThat(Files.getPosixFilePermissions(img)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(t.http.delete("/api/v1/bdevs/ok0").status()).isEqualTo(204);
    }

    @Test
    void theTokenNeverLeavesAndAnExportedDocumentPutBackKeepsIt() {
        assertThat(t.fileJson()).as("the file keeps it").contains(TOKEN);
        Http.Res got = t.http.get("/api/v1/config");
        assertThat(got.status()).isEqualTo(200);
        assertThat(got.body()).doesNotContain(TOKEN);
        assertThat(got.json().get("api").has("token")).isFalse();

        Http.Res put = t.http.put("/api/v1/config", got.body());
        assertThat(put.status()).as("%s", put).isEqualTo(200);
        assertThat(put.body()).doesNotContain(TOKEN);
        assertThat(t.fileJson()).as("the PUT kept the token").contains(TOKEN);
        assertThat(t.service.target().configSnapshot().api.token).isEqualTo(TOKEN);
        assertThat(t.http.get("/api/v1/config").status()).as("the token still works").isEqualTo(200);
    }

    @Test
    void storageCannotBeChangedThroughTheApi() {
        ObjectNode doc = (ObjectNode) t.http.get("/api/v1/config").json();
        ((ObjectNode) doc.get("storage")).putArray("fileDirectories").add("/etc");
        Http.Res r = t.http.put("/api/v1/config", doc.toString());
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.field()).isEqualTo("storage");
        assertThat(r.error()).startsWith("storage: the API cannot change where bdevs may live");
        assertThat(t.fileJson()).doesNotContain("\"/etc\"");

        doc.remove("storage");
        r = t.http.put("/api/v1/config", doc.toString());
        assertThat(r.status()).as("left out: kept. %s", r).isEqualTo(200);
        assertThat(Http.parse(t.fileJson()).get("storage").get("fileDirectories").get(0).asText())
            .isEqualTo(images().toString());
    }

    @Test
    void everyChangeRequestLeavesAnAuditLine() throws Exception {
        try (LogCapture log = new LogCapture("io.nvmf4j.service.api.AuditLog")) {
            assertThat(t.http.post("/api/v1/bdevs", "{\"name\": \"au0\", \"type\": \"null\", \"numBlocks\": 8}")
                .status()).isEqualTo(201);
            assertThat(t.http.post("/api/v1/bdevs", fileBdev("au1", "/etc/passwd")).status()).isEqualTo(400);
            assertThat(t.http.withToken("wrong-token-wrong-token").delete("/api/v1/bdevs/au0").status())
                .isEqualTo(401);
            assertThat(t.http.delete("/api/v1/bdevs/au0").status()).isEqualTo(204);
            assertThat(t.http.get("/api/v1/bdevs").status()).isEqualTo(200);

            ILoggingEvent added = log.await(": 201 accepted", Duration.ofSeconds(5));
            assertThat(added.getFormattedMessage()).matches("POST /api/v1/bdevs from 127\\.0\\.0\\.1:\\d+: 201 accepted");
            Map<String, Object> kv = LogCapture.keyValues(added);
            assertThat(kv).containsEntry("method", "POST").containsEntry("path", "/api/v1/bdevs")
                .containsEntry("status", 201).containsEntry("result", "accepted");
            assertThat((String) kv.get("client")).startsWith("127.0.0.1:");

            ILoggingEvent refused = log.await(": 400 refused: \"path: /etc/passwd is outside", Duration.ofSeconds(5));
            assertThat(LogCapture.keyValues(refused)).containsEntry("status", 400).containsEntry("result", "refused");
            ILoggingEvent denied = log.await("DELETE /api/v1/bdevs/au0 from 127.0.0.1:", Duration.ofSeconds(5));
            assertThat(denied.getFormattedMessage()).endsWith(": 401 refused: \"wrong bearer token\"");
            log.await(": 204 accepted", Duration.ofSeconds(5));
            assertThat(log.lines("GET ")).as("reads are not audited").isEmpty();
            assertThat(log.lines(TOKEN)).isEmpty();
        }
    }

    /**
     * Review: the reason and the route echo what the client sent; a CR/LF in them must not start a forged audit
     * line. The route's parameter (decoded: CR LF) comes back in the reason, the body's name in another.
     */
    @Test
    void crAndLfFromTheClientCannotForgeAnAuditLine() throws Exception {
        try (LogCapture log = new LogCapture("io.nvmf4j.service.api.AuditLog")) {
            String forged = "x%0D%0A2026-12-02T00:00:00.000Z INFO AuditLog - DELETE from 10.0.0.1:1: 204 accepted";
            assertThat(t.http.delete("/api/v1/bdevs/" + forged.replace(" ", "%20")).status()).isEqualTo(404);
            assertThat(t.http.post("/api/v1/bdevs",
                "{\"name\": \"n0\", \"type\": \"a\\r\\nb\\u2028c\\\"d\", \"numBlocks\": 8}").status())
                .isEqualTo(400);

            ILoggingEvent route = log.await("DELETE /api/v1/bdevs/x%0D%0A", Duration.ofSeconds(5));
            assertThat(route.getFormattedMessage()).as("one line").doesNotContain("\r").doesNotContain("\n")
                .contains("404 refused: \"").contains("x\\r\\n2026-12-02T00:00:00.000Z INFO AuditLog");
            ILoggingEvent body = log.await("POST /api/v1/bdevs from", Duration.ofSeconds(5));
            assertThat(body.getFormattedMessage()).as("one line").doesNotContain("\r").doesNotContain("\n")
                .doesNotContain("\u2028").contains("a\\r\\nb\\u2028c\\\"d");
            assertThat((String) LogCapture.keyValues(body).get("reason")).doesNotContain("\n");
        }
    }

    /**
     * The configuration service's own line for a change (what was asked, and why it was refused) carries the route's
     * parameter and a refusal that quotes it: both escaped, one line.
     */
    @Test
    void aPathParameterWithControlCharactersGivesOneEscapedServiceLine() throws Exception {
        try (LogCapture log = new LogCapture("io.nvmf4j.service.state.ConfigService")) {
            String forged = "y%0D%0A2026-12-02T00:00:00.000Z%20INFO%20ConfigService%20-%20remove%20bdev%20m0:%20done%1B";
            assertThat(t.http.delete("/api/v1/bdevs/" + forged).status()).isEqualTo(404);
            ILoggingEvent line = log.await("remove bdev y", Duration.ofSeconds(5));
            assertThat(line.getFormattedMessage()).as("one line").doesNotContain("\r").doesNotContain("\n")
                .doesNotContain("\u001b")
                .startsWith("remove bdev y\\r\\n2026-12-02T00:00:00.000Z INFO ConfigService - remove bdev m0: "
                    + "done\\u001b: refused: ")
                .contains("y\\r\\n2026", "done\\u001b");
            assertThat(log.lines("done, saved to")).as("no line that looks like an accepted change").isEmpty();
        }
    }
}

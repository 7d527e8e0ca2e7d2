package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.testhost.FreePorts;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A document written by the release before the control layer (commit 8d0403e, 2026-12-06) loads unchanged and means
 * the same, and the service's answers keep their shape: an upgrade needs no hand edit. The fixture in
 * {@code release-2026-12-06/} was made by that release's own service through its REST API ({@code capture.sh} there
 * says how): bdevs of every local type (malloc, null, file, error), two subsystems, one masked namespace, an ANA
 * group non-optimized on a listener, a host with a DH-HMAC-CHAP key file, a discovery host with a TLS PSK file, a
 * referral and stored TCP options. Its state directory and ports are placeholders, set to this test's.
 */
class ReleaseDocumentTest {
    private static final String RELEASE = "/release-2026-12-06/";
    private static final String N1 = "nqn.2026-12.io.nvmf4j:fixture1";
    private static final String N2 = "nqn.2026-12.io.nvmf4j:fixture2";
    private static final String H1 = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";

    @TempDir
    Path dir;
    private final Map<String, String> placeholders = new LinkedHashMap<>();
    private JsonNode release;

    @BeforeEach
    void placeTheReleasesStateDirectory() throws IOException {
        placeholders.put("@DIR@", dir.toString());
        placeholders.put("@TCP1@", Integer.toString(FreePorts.pick()));
        placeholders.put("@TCP2@", Integer.toString(FreePorts.pick()));
        placeholders.put("@API@", Integer.toString(FreePorts.pick()));
        Files.createDirectories(dir.resolve("img"));
        try (RandomAccessFile f = new RandomAccessFile(dir.resolve("img/disk0.img").toFile(), "rw")) {
            f.setLength(64L << 20);
        }
        Path keys = Files.createDirectories(dir.resolve("keys"));
        for (String k : List.of("h1.psk", "h2.key")) {
            Files.writeString(keys.resolve(k), resource(k));
            Files.setPosixFilePermissions(keys.resolve(k), PosixFilePermissions.fromString("rw-------"));
        }
        String doc = resource("config.json");
        Files.writeString(dir.resolve("config.json"), doc);
        release = ConfigStore.mapper().readTree(doc);
    }

    @Test
    void theReleasesDocumentLoadsValidAndWritesBackUnchanged() throws IOException {
        TargetConfig c = ConfigStore.load(dir.resolve("config.json"));
        ConfigValidator.validate(c);
        JsonNode now = ConfigStore.mapper().readTree(ConfigStore.toJson(c));
        assertThat(differences("", release, now, true)).as("the document as this release writes it back").isEmpty();
        assertThat(now).as("and nothing added to it").isEqualTo(release);
    }

    @Test
    void theServiceServesItAndAnswersInTheReleasesShape() throws Exception {
        try (TestService t = TestService.restart(dir)) {
            assertThat(ConfigStore.mapper().readTree(t.fileJson())).as("the file after the start").isEqualTo(release);
            String ana = "/api/v1/subsystems/" + N1 + "/listeners/tcp/127.0.0.1/" + placeholders.get("@TCP1@") + "/ana";
            Map<String, String> reads = new LinkedHashMap<>();
            reads.put("/api/v1/bdevs", "bdevs");
            reads.put("/api/v1/bdevs/f0", "bdevs_f0");
            reads.put("/api/v1/subsystems", "subsystems");
            reads.put("/api/v1/subsystems/" + N1, "subsystems_fixture1");
            reads.put("/api/v1/subsystems/" + N2, "subsystems_fixture2");
            reads.put("/api/v1/subsystems/" + N1 + "/namespaces", "subsystems_fixture1_namespaces");
            reads.put("/api/v1/subsystems/" + N1 + "/namespaces/2", "subsystems_fixture1_namespaces_2");
            reads.put("/api/v1/subsystems/" + N1 + "/listeners", "subsystems_fixture1_listeners");
            reads.put(ana, "subsystems_fixture1_listeners_ana");
            reads.put("/api/v1/subsystems/" + N2 + "/hosts", "subsystems_fixture2_hosts");
            reads.put("/api/v1/subsystems/" + N2 + "/namespaces/1/hosts", "subsystems_fixture2_namespaces_1_hosts");
            reads.put("/api/v1/subsystems/" + N2 + "/controllers", "subsystems_fixture2_controllers");
            reads.put("/api/v1/discovery/referrals", "discovery_referrals");
            reads.put("/api/v1/discovery/hosts", "discovery_hosts");
            reads.put("/api/v1/transports", "transports");
            reads.put("/api/v1/config", "config");
            List<String> changed = new ArrayList<>();
            for (Map.Entry<String, String> r : reads.entrySet()) {
                Http.Res res = t.http.get(r.getKey());
                assertThat(res.status()).as("GET %s: %s", r.getKey(), res.body()).isEqualTo(200);
                JsonNode then = ConfigStore.mapper().readTree(resource("answers/" + r.getValue() + ".json"));
                changed.addAll(differences("GET " + r.getKey() + " ", then, ConfigStore.mapper().readTree(res.body()),
                    true));
            }
            assertThat(changed).as("what the release answered that this one answers otherwise").isEmpty();
            assertThat(t.http.get("/api/v1/subsystems/" + N2 + "/namespaces/1/hosts").body()).contains(H1);
        }
    }

    /**
     * Where {@code now} lacks or changes what {@code then} holds: each field of an object (fields {@code now} adds
     * are allowed), each element of an array, the kind of each value and, with {@code values}, the value itself.
     */
    static List<String> differences(String at, JsonNode then, JsonNode now, boolean values) {
        List<String> out = new ArrayList<>();
        if (then.isObject()) {
            if (!now.isObject()) {
                out.add(at + ": an object then, " + now.getNodeType() + " now");
                return out;
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = then.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                if (!now.has(f.getKey())) {
                    out.add(at + "." + f.getKey() + ": missing now");
                } else {
                    out.addAll(differences(at + "." + f.getKey(), f.getValue(), now.get(f.getKey()), values));
                }
            }
        } else if (then.isArray()) {
            if (!now.isArray() || now.size() != then.size()) {
                out.add(at + ": " + then + " then, " + now + " now");
                return out;
            }
            for (int i = 0; i < then.size(); i++) {
                out.addAll(differences(at + "[" + i + "]", then.get(i), now.get(i), values));
            }
        } else if (then.getNodeType() != now.getNodeType() || values && !then.equals(now)) {
            out.add(at + ": " + then + " then, " + now + " now");
        }
        return out;
    }

    /** A file of the fixture, its placeholders set. */
    private String resource(String name) throws IOException {
        try (InputStream in = ReleaseDocumentTest.class.getResourceAsStream(RELEASE + name)) {
            assertThat(in).as("fixture %s", name).isNotNull();
            String s = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            for (Map.Entry<String, String> p : placeholders.entrySet()) {
                s = s.replace(p.getKey(), p.getValue());
            }
            return s;
        }
    }
}

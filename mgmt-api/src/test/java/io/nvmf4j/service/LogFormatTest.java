package io.nvmf4j.service;

import io.nvmf4j.testhost.FreePorts;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.api.TestService;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped logback.xml: {@code NVMF4J_LOG_FORMAT=json} writes one JSON object per line (timestamp, level,
 * logger, thread, message and the controller lines' key/value pairs), the default is text, and another value is
 * named on stderr while the service logs as text. The service runs in a child JVM with the real logback.xml.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LogFormatTest {
    private static final String NQN = "nqn.2026-12.io.nvmf4j:log-format";
    private static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000c1";
    private static final String STRANGER = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000c2";

    @TempDir
    Path dir;

    @Test
    void jsonIsOneObjectPerLineWithTheControllersFields() throws Exception {
        List<String> lines = run("json");
        ObjectMapper mapper = new ObjectMapper();
        List<JsonNode> events = new ArrayList<>();
        for (String line : lines) {
            JsonNode e = mapper.readTree(line); // throws on any line that is not one JSON object
            assertThat(e.isObject()).as(line).isTrue();
            assertThat(e.path("timestamp").asLong()).as("ms since the epoch").isGreaterThan(1_700_000_000_000L);
            assertThat(e.path("level").asText()).isNotEmpty();
            assertThat(e.path("loggerName").asText()).startsWith("io.nvmf4j.");
            assertThat(e.path("threadName").asText()).isNotEmpty();
            assertThat(e.path("formattedMessage").asText()).isNotEmpty();
            events.add(e);
        }
        JsonNode connected = find(events, e -> e.path("formattedMessage").asText().contains(" connected: host " + HOSTNQN));
        assertThat(connected.path("level").asText()).isEqualTo("INFO");
        assertThat(connected.path("loggerName").asText()).isEqualTo("io.nvmf4j.engine.ControllerLog");
        assertThat(kv(connected, "subnqn")).isEqualTo(NQN);
        assertThat(kv(connected, "hostnqn")).isEqualTo(HOSTNQN);
        assertThat(kv(connected, "host")).startsWith("127.0.0.1:");
        assertThat(kv(connected, "transport")).isEqualTo("tcp");
        assertThat(kv(connected, "kato_ms")).isEqualTo("10000");
        JsonNode disconnected = find(events, e -> e.path("formattedMessage").asText().contains(" disconnected: host " + HOSTNQN));
        assertThat(kv(disconnected, "cntlid")).isEqualTo(kv(connected, "cntlid"));
        assertThat(kv(disconnected, "io_queues")).isEqualTo("1");
        JsonNode refused = find(events, e -> e.path("formattedMessage").asText().startsWith("connect refused: host " + STRANGER));
        assertThat(kv(refused, "reason")).isEqualTo("host not allowed");
        assertThat(kv(refused, "host")).startsWith("127.0.0.1:");
    }

    @Test
    void textIsTheDefault() throws Exception {
        List<String> lines = run(null);
        assertThat(lines).anyMatch(l -> l.matches("\\d{4}-\\d\\d-\\d\\dT\\S+ INFO  \\[nvmf4j-poll-\\S+] ControllerLog - "
            + "controller \\d+ of " + NQN + " connected: host " + HOSTNQN + " at 127\\.0\\.0\\.1:\\d+ over tcp, kato 10000 ms, "
            + "admin queue of 32"));
        assertThat(lines).anyMatch(l -> l.contains("ControllerLog - connect refused: host " + STRANGER + " at 127.0.0.1:"));
        assertThat(lines).noneMatch(l -> l.startsWith("{"));
    }

    @Test
    void anotherValueIsNamedAndTheServiceLogsAsText() throws Exception {
        List<String> lines = run("xml");
        assertThat(lines).contains("nvmf4j: NVMF4J_LOG_FORMAT: must be text or json, got 'xml'; logging as text");
        assertThat(lines).anyMatch(l -> l.contains("ControllerLog - controller "));
    }

    private static JsonNode find(List<JsonNode> events, Predicate<JsonNode> p) {
        return events.stream().filter(p).findFirst().orElseThrow(() -> new AssertionError("no such event in " + events));
    }

    /** A key/value pair of the event ({@code kvpList}: a list of one-entry objects). */
    private static String kv(JsonNode event, String key) {
        for (JsonNode pair : event.path("kvpList")) {
            if (pair.has(key)) {
                return pair.get(key).asText();
            }
        }
        throw new AssertionError("no " + key + " in " + event);
    }

    /**
     * Starts the service with {@code format} (null: unset), connects a controller with one I/O queue, disconnects
     * it, has a Connect of a host that is not allowed refused, stops the service; answers its output lines.
     */
    private List<String> run(String format) throws Exception {
        int port = FreePorts.pick();
        TargetConfig c = ServiceProcess.document(NQN, port);
        SubsystemConfig s = c.subsystems.get(0);
        s.allowAnyHost = false; // the stranger's connect is refused and logged
        s.hosts.add(HOSTNQN);
        Path file = dir.resolve("config.json");
        ConfigStore.save(file, c);
        Path log = dir.resolve("service-" + format + ".log");
        Path classes = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
            // the shipped file, not a logback-test.xml of a test jar on the class path
            "-Dlogback.configurationFile=" + classes.resolve("logback.xml"),
            "-cp", classes + File.pathSeparator + System.getProperty("java.class.path"),
            Main.class.getName(), "--state-dir", dir.toString(), "--config", file.toString())
            .redirectErrorStream(true).redirectOutput(log.toFile()).directory(dir.toFile());
        pb.environment().remove("NVMF4J_LOG_FORMAT");
        pb.environment().put("NVMF4J_LOG_LEVEL", "INFO");
        if (format != null) {
            pb.environment().put("NVMF4J_LOG_FORMAT", format);
        }
        Process p = pb.start();
        try {
            awaitListening(p, port, log);
            try (NvmeController ctrl = NvmeController.open("127.0.0.1", port, NQN, HOSTNQN, 10000, 1, TcpHostOptions.DEFAULT)) {
                assertThat(ctrl.io(0).read(1, 0, 1).ok()).isTrue();
            }
            try (TcpHost q = TcpHost.connect("127.0.0.1", port, TcpHostOptions.DEFAULT)) {
                assertThat(new NvmeHost(q, 512).fabricsConnect(0, NvmeController.ADMIN_SQSIZE, 0xFFFF, 0, STRANGER, NQN,
                    NvmeController.hostIdFor(STRANGER)).completion().ok()).isFalse();
            }
            awaitLine(log, "connect refused");
            awaitLine(log, "disconnected");
        } finally {
            p.destroy();
            if (!p.waitFor(15, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
            }
        }
        return Files.readAllLines(log, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank()).toList();
    }

    private static void awaitListening(Process p, int port, Path log) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            assertThat(p.isAlive()).as("service alive; output:%n%s", Files.readString(log)).isTrue();
            try (java.net.Socket ignored = new java.net.Socket("127.0.0.1", port)) {
                return;
            } catch (java.io.IOException notYet) {
                Thread.sleep(50);
            }
        }
        throw new AssertionError("service did not listen on " + port + "; output:\n" + Files.readString(log));
    }

    private static void awaitLine(Path log, String text) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (Files.readString(log).contains(text)) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no '" + text + "' in\n" + Files.readString(log));
    }
}

package io.nvmf4j.service.profile;

import io.nvmf4j.testhost.FreePorts;
import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SpdkCores;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.Service;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The real service started here with each profile scaled down (--scale-down's sizing from this machine's /proc and
 * /sys): its poll groups pinned as the scaled profile says, the API over TLS with its token, the RDMA listener on the
 * uplink address reporting why it does not serve where there is no RDMA device, and a TCP listener added beside it
 * serving I/O.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ProfileStartTest {
    private static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:7d1c2e3f-0a4b-4c5d-8e6f-0123456789ab";

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"bluefield2", "bluefield3"})
    void startsScaledDownAndServes(String name) throws Exception {
        Profile p = Profile.load(name);
        TargetConfig c = p.config(List.of("127.0.0.1"), "127.0.0.1");
        MachineFacts here = new MachineFacts(Path.of("/"));
        Sizing s = Sizing.scaledDown(p, c, here.onlineCpus(), here.meminfo("MemTotal"));
        ConfigValidator.validate(c);
        // tests pick free ports: a free one for the API (0 would turn it off), 0 for both listeners (the profile's
        // 4420 is for the card)
        c.api.port = FreePorts.pick();
        SubsystemConfig sub = c.subsystems.get(0);
        sub.listeners.forEach(l -> l.port = 0);
        sub.listeners.add(new ListenerConfig("tcp", "127.0.0.1", 0));
        // what an operator adds through the API: a block device, a namespace, a host
        c.bdevs.add(new BdevConfig("m0", "malloc", 512, 2048));
        sub.namespaces.add(new NamespaceConfig(1, "m0"));
        sub.hosts.add(HOSTNQN);
        Path cert = dir.resolve("api.crt");
        Path key = dir.resolve("api.key");
        ProfileSetup.makeCertificate(ProfileSetup.certificateCommand(cert, key, "127.0.0.1"));
        c.api.tlsCert = cert.toString();
        c.api.tlsKey = key.toString();
        Path file = dir.resolve("config.json");
        ConfigStore.save(file, c);

        try (Service service = Service.start(dir, file)) {
            HttpResponse<String> r = Http.trusting(cert).send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:"
                    + service.apiPort() + "/api/v1/subsystems/" + sub.nqn + "/listeners"))
                .header("Authorization", "Bearer " + service.apiToken().value()).build(),
                HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            JsonNode listeners = Http.parse(r.body());
            JsonNode rdma = find(listeners, "rdma");
            JsonNode tcp = find(listeners, "tcp");
            if (Files.isDirectory(Path.of("/sys/class/infiniband"))) {
                assertThat(rdma.get("state").asText()).isIn("listening", "failed");
            } else {
                assertThat(rdma.get("state").asText()).isEqualTo("failed");
                assertThat(rdma.get("cause").asText()).isNotBlank();
            }
            assertThat(tcp.get("state").asText()).isEqualTo("listening");
            int port = tcp.get("boundPort").asInt();

            // no token: refused
            HttpResponse<String> anon = Http.trusting(cert).send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:"
                + service.apiPort() + "/api/v1/subsystems")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(anon.statusCode()).isEqualTo(401);

            byte[] data = new byte[4096];
            new java.util.Random(7).nextBytes(data);
            try (NvmeController ctrl = NvmeController.open("127.0.0.1", port, sub.nqn, HOSTNQN, 0, 1,
                TcpHostOptions.DEFAULT)) {
                assertThat(ctrl.io(0).write(1, 8, data).ok()).isTrue();
                var read = ctrl.io(0).read(1, 8, 8);
                assertThat(read.ok()).isTrue();
                assertThat(read.data()).isEqualTo(data);
                // the poll groups (started by the first connection) run on the scaled profile's CPUs, one each
                List<Integer> pinned = SpdkCores.parse(s.config.pollGroupCores).stream().boxed().toList();
                List<Integer> seen = pollGroupCpus();
                assertThat(seen).isNotEmpty().hasSizeLessThanOrEqualTo(s.config.cores).doesNotHaveDuplicates();
                assertThat(pinned).containsAll(seen);
            }
        }
    }

    private static JsonNode find(JsonNode listeners, String transport) {
        for (JsonNode l : listeners) {
            if (l.get("transport").asText().equals(transport)) {
                return l;
            }
        }
        throw new AssertionError("no " + transport + " listener in " + listeners);
    }

    /** Cpus_allowed_list of each thread named nvmf4j-poll-* in this process (/proc/self/task). */
    private static List<Integer> pollGroupCpus() throws Exception {
        List<Integer> cpus = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : tasks.toList()) {
                String comm;
                String status;
                try {
                    comm = Files.readString(t.resolve("comm")).strip();
                    status = Files.readString(t.resolve("status"));
                } catch (java.io.IOException gone) {
                    continue; // a thread that ended meanwhile
                }
                if (comm.startsWith("nvmf4j-poll")) {
                    String list = status.lines().filter(l -> l.startsWith("Cpus_allowed_list:")).findFirst()
                        .orElseThrow().substring("Cpus_allowed_list:".length()).strip();
                    assertThat(list).as("CPUs of %s", comm).matches("\\d+");
                    cpus.add(Integer.parseInt(list));
                }
            }
        }
        return cpus;
    }
}

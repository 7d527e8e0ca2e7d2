package io.nvmf4j.cli;

import io.nvmf4j.testhost.FreePorts;
import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.cli.Cli.Run;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.service.api.TestService;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * nvmfctl in-process against the service in-process (one for the class; each test uses its own names):
 * every subcommand's success path with its table and --json output, and the error exit codes.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NvmfctlTest {
    private static final String NQN = TestService.NQN;

    @TempDir
    static Path dir;
    private static TestService t;
    private static Cli cli;
    private static String url;

    @BeforeAll
    static void start() throws Exception {
        t = TestService.start(dir.resolve("state"), c -> { });
        url = "http://127.0.0.1:" + t.service.apiPort();
        cli = new Cli(Map.of(), "--url", url, "--state-dir", t.dir.toString());
    }

    @AfterAll
    static void stop() {
        t.close();
    }

    private static Run ok(String... args) {
        Run r = cli.run(args);
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(r.err()).as("%s", r).isEmpty();
        return r;
    }

    private static Run fails(int code, String... args) {
        Run r = cli.run(args);
        assertThat(r.code()).as("%s", r).isEqualTo(code);
        assertThat(r.err()).as("%s", r).doesNotContain("Exception").doesNotContain("\tat ");
        return r;
    }

    private static JsonNode json(Run r) {
        return Http.parse(r.out());
    }

    @Test
    void health() {
        assertThat(ok("health").out()).isEqualTo("UP (live: yes, ready: yes) at " + url + "\n");
        assertThat(json(ok("health", "--json"))).isEqualTo(Http.parse("{\"status\":\"UP\",\"live\":true,\"ready\":true}"));
    }

    @Test
    void bdevCreateListGetGrowDelete() {
        assertThat(ok("bdev", "create", "malloc", "b1", "--size", "1M").out()).isEqualTo("""
            name       b1
            type       malloc
            blockSize  512
            numBlocks  2048
            directIo   false
            usedBy     -
            """);
        assertThat(json(ok("--json", "bdev", "create", "null", "b2", "--num-blocks", "100", "--block-size", "4096")))
            .isEqualTo(Http.parse("{\"name\":\"b2\",\"type\":\"null\",\"blockSize\":4096,\"numBlocks\":100,"
                + "\"directIo\":false,\"usedBy\":null}"));

        // other tests remove the bdevs they create, so these are all there are
        assertThat(ok("bdev", "list").out()).isEqualTo("""
            NAME  TYPE    BLOCK  BLOCKS  SIZE     USED-BY                            PATH
            m0    malloc  512    2048    1 MiB    nqn.2026-11.io.nvmf4j:rest-test/1  -
            b1    malloc  512    2048    1 MiB    -                                  -
            b2    null    4096   100     400 KiB  -                                  -
            """);
        JsonNode all = json(ok("bdev", "list", "--json"));
        assertThat(all.findValuesAsText("name")).contains("m0", "b1", "b2");

        assertThat(ok("bdev", "get", "b1").out()).startsWith("name       b1\ntype       malloc\n");
        assertThat(ok("bdev", "grow", "b2", "--size", "1M").out()).contains("blockSize  4096\nnumBlocks  256\n");
        assertThat(json(ok("bdev", "grow", "b2", "--num-blocks", "300", "--json")).get("numBlocks").asLong())
            .isEqualTo(300);
        assertThat(ok("bdev", "delete", "b1").out()).isEqualTo("deleted bdev b1\n");
        assertThat(json(ok("bdev", "delete", "b2", "--json"))).isEqualTo(Http.parse("{\"deleted\":{\"bdev\":\"b2\"}}"));
        assertThat(t.http.get("/api/v1/bdevs/b1").status()).isEqualTo(404);
    }

    @Test
    void fileBdevTakesTheFileSize() throws Exception {
        Path img = t.dir.resolve("images/f1.img"); // where the service allows file bdevs by default
        try (RandomAccessFile f = new RandomAccessFile(img.toFile(), "rw")) {
            f.setLength(1 << 20);
        }
        Run r = ok("bdev", "create", "file", "f1", "--path", img.toString());
        assertThat(r.out()).contains("type       file\n").contains("path       " + img + "\n");
        assertThat(ok("bdev", "list").out()).containsPattern("\nf1 +file +512 +0 +file size +- +" + img + "\n");
        ok("bdev", "delete", "f1");
    }

    @Test
    void subsystemCreateListGetAllowAnyHostDelete() {
        String nqn = "nqn.2026-11.io.nvmf4j:cli-sub";
        Run created = ok("subsystem", "create", "-n", nqn, "--serial", "SN-CLI-1", "--model", "cli model",
            "-q", TestService.HOSTNQN, "--max-namespaces", "8");
        assertThat(created.out()).startsWith("nqn            " + nqn + "\nserial         SN-CLI-1\n"
            + "model          cli model\nallowAnyHost   false\nhosts          " + TestService.HOSTNQN + "\n"
            + "maxNamespaces  8\n");
        String list = ok("subsystem", "list").out();
        assertThat(list.lines().findFirst().orElseThrow()).matches("NQN +SERIAL +MODEL +ANY-HOST +HOSTS +NAMESPACES +LISTENERS");
        assertThat(list).containsPattern("\n" + nqn.replace(".", "\\.") + " +SN-CLI-1 +cli model +no +1 +0 +-\n")
            .containsPattern("\n" + NQN.replace(".", "\\.") + " +\\S+ +nvmf4j +yes +0 +\\d+ +tcp 127\\.0\\.0\\.1:\\d+\n");
        assertThat(json(ok("subsystem", "list", "--json")).findValuesAsText("nqn")).contains(NQN, nqn);

        assertThat(ok("subsystem", "get", "-n", nqn).out()).contains("namespaces     -\n").contains("listeners      -\n");
        assertThat(json(ok("subsystem", "get", "--nqn", nqn, "--json")).get("serial").asText()).isEqualTo("SN-CLI-1");

        assertThat(ok("subsystem", "allow-any-host", "-n", nqn, "yes").out()).isEqualTo(nqn + ": allow any host yes\n");
        assertThat(json(ok("subsystem", "allow-any-host", "-n", nqn, "no", "--json")).get("allowAnyHost").asBoolean()).isFalse();
        assertThat(ok("subsystem", "delete", "-n", nqn).out()).isEqualTo("deleted subsystem " + nqn + "\n");
        assertThat(t.http.get("/api/v1/subsystems/" + enc(nqn)).status()).isEqualTo(404);
    }

    @Test
    void namespaceAddedThroughNvmfctlIsInTheConfigDocument() {
        ok("bdev", "create", "malloc", "nsb", "--size", "1M");
        Run added = ok("ns", "add", "-n", NQN, "-b", "nsb", "--nsid", "20",
            "--nguid", "0123456789abcdef0123456789abcdef", "--uuid", "3c9e5a52-7f0e-4b8b-9a43-1f7a1e2f9d10");
        assertThat(added.out()).isEqualTo("""
            nsid   20
            bdev   nsb
            nguid  0123456789abcdef0123456789abcdef
            uuid   3c9e5a52-7f0e-4b8b-9a43-1f7a1e2f9d10
            """);
        JsonNode config = t.http.get("/api/v1/config").json();
        JsonNode ns = null;
        for (JsonNode s : config.get("subsystems")) {
            for (JsonNode n : s.get("namespaces")) {
                if (s.get("nqn").asText().equals(NQN) && n.get("nsid").asInt() == 20) {
                    ns = n;
                }
            }
        }
        assertThat(ns).as("namespace 20 in GET /api/v1/config").isNotNull();
        assertThat(ns.get("bdev").asText()).isEqualTo("nsb");
        assertThat(t.fileJson()).contains("\"nsb\"");

        String list = ok("ns", "list", "--nqn", NQN).out();
        assertThat(list).startsWith("NSID  BDEV  NGUID                             UUID\n")
            .contains("\n20    nsb   0123456789abcdef0123456789abcdef  3c9e5a52-7f0e-4b8b-9a43-1f7a1e2f9d10\n");
        assertThat(json(ok("ns", "list", "--nqn", NQN, "--json")).findValuesAsText("bdev")).contains("m0", "nsb");
        assertThat(ok("ns", "remove", "--nqn", NQN, "--nsid", "20").out())
            .isEqualTo("removed namespace 20 from " + NQN + "\n");
        ok("ns", "add", "-n", NQN, "-b", "nsb", "--nsid", "21");
        assertThat(json(ok("ns", "remove", "-n", NQN, "--nsid", "21", "--json")))
            .isEqualTo(Http.parse("{\"removed\":{\"subsystem\":\"" + NQN + "\",\"nsid\":21}}"));
        ok("bdev", "delete", "nsb");
    }

    @Test
    void hostAddListRemove() {
        String nqn = "nqn.2026-11.io.nvmf4j:cli-hosts";
        String host = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000c1";
        ok("subsystem", "create", "-n", nqn);
        assertThat(ok("host", "add", "--nqn", nqn, "-q", host).out()).isEqualTo("allowed host " + host + " on " + nqn + "\n");
        assertThat(ok("host", "list", "--nqn", nqn).out()).isEqualTo("HOSTNQN\n" + host + "\n");
        assertThat(json(ok("host", "list", "--nqn", nqn, "--json"))).isEqualTo(Http.parse("[\"" + host + "\"]"));
        assertThat(ok("host", "remove", "-n", nqn, "--hostnqn", host).out())
            .isEqualTo("removed host " + host + " from " + nqn + "\n");
        assertThat(ok("host", "list", "--nqn", nqn).out()).isEqualTo("HOSTNQN\n");
        ok("host", "add", "-n", nqn, "-q", host);
        assertThat(json(ok("host", "remove", "-n", nqn, "-q", host, "--json"))).isEqualTo(Http.parse(
            "{\"removed\":{\"subsystem\":\"" + nqn + "\",\"host\":\"" + host + "\"}}"));
        ok("subsystem", "delete", "-n", nqn);
    }

    /** host add --tls-key: the PSK file's path goes to the service (absolute), the key never. */
    @Test
    void hostAddWithATlsKey() throws Exception {
        String nqn = "nqn.2026-11.io.nvmf4j:cli-tls";
        String host = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000c2";
        Path key = dir.resolve("cli-host.psk");
        String psk = io.nvmf4j.auth.TlsPsk.format(2, "nvmf4j-cli-psk!".repeat(3).concat("!!!").getBytes(
            StandardCharsets.US_ASCII));
        Files.writeString(key, psk, StandardCharsets.US_ASCII);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        ok("subsystem", "create", "-n", nqn);
        assertThat(ok("host", "add", "-n", nqn, "-q", host, "--tls-key", key.toString(), "--tls-key-derivation",
            "libnvme").out()).isEqualTo("allowed host " + host + " on " + nqn + " (TLS PSK)\n");
        String shown = ok("subsystem", "get", "-n", nqn, "--json").out();
        assertThat(shown).contains("\"tlsKey\" : \"" + key + "\"").doesNotContain(psk.substring(16, 60));
        ok("subsystem", "delete", "-n", nqn);
    }

    /**
     * host add/list/remove with the discovery NQN: a host's TLS PSK for the discovery subsystem (nvme discover --tls),
     * stored as discovery.hostKeys; no DH-HMAC-CHAP keys there, a tlsKey needed, a bad key file named.
     */
    @Test
    void discoveryHostTlsKeys() throws Exception {
        String disc = io.nvmf4j.config.Nqn.DISCOVERY;
        String host = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000d1";
        Path key = dir.resolve("cli-discovery.psk");
        String psk = io.nvmf4j.auth.TlsPsk.format(1, "nvmf4j-discovery-psk-32-bytes!!!".getBytes(
            StandardCharsets.US_ASCII));
        Files.writeString(key, psk, StandardCharsets.US_ASCII);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        assertThat(ok("host", "list", "-n", disc).out()).isEqualTo("HOSTNQN  TLSKEY\n");
        assertThat(ok("host", "add", "-n", disc, "-q", host, "--tls-key", key.toString()).out())
            .isEqualTo("host " + host + " has a TLS PSK for the discovery subsystem\n");
        assertThat(ok("host", "list", "-n", disc).out()).isEqualTo("HOSTNQN" + " ".repeat(host.length() - 5)
            + "TLSKEY\n" + host + "  " + key + "\n");
        assertThat(json(ok("host", "list", "-n", disc, "--json"))).isEqualTo(Http.parse(
            "[{\"host\":\"" + host + "\",\"tlsKey\":\"" + key + "\"}]"));
        String document = ok("config", "export").out();
        assertThat(document).contains("\"discovery\"").doesNotContain(psk.substring(16, 40));

        assertThat(fails(1, "host", "add", "-n", disc, "-q", host, "--tls-key", key.toString()).err())
            .isEqualTo("nvmfctl: host " + host + " already has a key on the discovery subsystem\n");
        assertThat(fails(2, "host", "add", "-n", disc, "-q", host, "--dhchap-key", key.toString()).err())
            .isEqualTo("nvmfctl: --dhchap-key, --dhchap-ctrl-key: the discovery subsystem takes a TLS PSK only "
                + "(--tls-key)\n");
        assertThat(fails(2, "host", "add", "-n", disc, "-q", host).err()).startsWith(
            "nvmfctl: the discovery subsystem needs --tls-key");
        String other = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000d2";
        assertThat(fails(1, "host", "add", "-n", disc, "-q", other, "--tls-key", dir.resolve("absent.psk")
            .toString()).err()).startsWith("nvmfctl: tlsKey: ").contains("does not exist");
        assertThat(fails(1, "host", "add", "-n", disc, "-q", "host1", "--tls-key", key.toString()).err())
            .startsWith("nvmfctl: nqn: ").contains("allowLegacyNqns");

        assertThat(ok("host", "remove", "-n", disc, "-q", host).out())
            .isEqualTo("removed the TLS PSK of host " + host + " for the discovery subsystem\n");
        assertThat(ok("host", "list", "-n", disc).out()).isEqualTo("HOSTNQN  TLSKEY\n");
        assertThat(fails(1, "host", "remove", "-n", disc, "-q", host).err())
            .isEqualTo("nvmfctl: host " + host + " has no key on the discovery subsystem\n");
    }

    @Test
    void listenerAnaState() {
        String port = String.valueOf(t.nvmePort);
        assertThat(ok("listener", "ana-state", "-n", NQN, "-a", "127.0.0.1", "-s", port).out()).startsWith(
            "GROUP  STATE      NSIDS\n1      optimized  1");
        assertThat(ok("listener", "ana-state", "-n", NQN, "-a", "127.0.0.1", "-s", port, "--group", "1", "--state",
            "non-optimized").out()).isEqualTo("ANA group 1 of " + NQN + " through tcp 127.0.0.1:" + port
            + ": non-optimized\n");
        assertThat(json(ok("listener", "ana-state", "-n", NQN, "-a", "127.0.0.1", "-s", port, "--json")).get(0)
            .get("state").asText()).isEqualTo("non-optimized");
        Run bad = fails(1, "listener", "ana-state", "-n", NQN, "-a", "127.0.0.1", "-s", port, "--state", "slow");
        assertThat(bad.err()).contains("state: must be optimized, non-optimized");
        ok("listener", "ana-state", "-n", NQN, "-a", "127.0.0.1", "-s", port, "-g", "1", "--state", "optimized");
    }

    @Test
    void listenerAddListRemove() {
        String nqn = "nqn.2026-11.io.nvmf4j:cli-listen";
        int port = FreePorts.pick();
        ok("subsystem", "create", "-n", nqn);
        assertThat(ok("listener", "add", "-n", nqn, "-a", "127.0.0.1", "-s", String.valueOf(port)).out())
            .isEqualTo("listening for " + nqn + " on tcp 127.0.0.1:" + port + " (listening)\n");
        assertThat(ok("listener", "list", "--nqn", nqn).out()).isEqualTo(
            "TRANSPORT  ADDRESS          STATE\ntcp        127.0.0.1:" + port + "  listening\n");
        assertThat(json(ok("listener", "list", "--nqn", nqn, "--json")).get(0)).isEqualTo(Http.parse(
            "{\"transport\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":" + port + ",\"secureChannel\":\"none\","
                + "\"boundPort\":" + port + ",\"state\":\"listening\",\"cause\":null}"));
        assertThat(ok("listener", "remove", "--nqn", nqn, "-t", "tcp", "-a", "127.0.0.1", "-s", String.valueOf(port))
            .out()).isEqualTo("removed listener tcp 127.0.0.1:" + port + " from " + nqn + "\n");
        assertThat(ok("listener", "list", "--nqn", nqn).out()).isEqualTo("TRANSPORT  ADDRESS  STATE\n");

        // the long spellings of nvme-cli, ADDR:PORT in -a, the old --port hidden alias, and --json for a remove
        ok("listener", "add", "--nqn", nqn, "--transport", "tcp", "--traddr", "127.0.0.1:" + port);
        assertThat(ok("listener", "list", "-n", nqn).out()).contains("tcp        127.0.0.1:" + port + "  listening\n");
        assertThat(json(ok("listener", "remove", "-n", nqn, "-a", "127.0.0.1", "--port", String.valueOf(port),
            "--json"))).isEqualTo(Http.parse("{\"removed\":{\"subsystem\":\"" + nqn + "\",\"listener\":"
            + "{\"transport\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":" + port + "}}}"));

        // NVMe/TCP TLS: --secure-channel on the listener, --tls-key on the host
        assertThat(ok("listener", "add", "-n", nqn, "-a", "127.0.0.1", "-s", String.valueOf(port), "--secure-channel",
            "required").out()).isEqualTo("listening for " + nqn + " on tcp 127.0.0.1:" + port
            + " (listening), TLS required\n");
        assertThat(json(ok("listener", "list", "-n", nqn, "--json")).get(0).get("secureChannel").asText())
            .isEqualTo("required");
        assertThat(fails(1, "listener", "add", "-n", nqn, "-a", "127.0.0.1", "-s", "0", "--secure-channel", "always")
            .err()).contains("secureChannel: must be none, optional or required, got always");
        ok("listener", "remove", "-n", nqn, "-a", "127.0.0.1", "-s", String.valueOf(port));
        ok("subsystem", "delete", "-n", nqn);
    }

    /** IPv6: given as -a ::1 -s P or -a [::1]:P, written [::1]:P in every human output. */
    @Test
    void ipv6AddressesAreWrittenInBrackets() {
        String nqn = "nqn.2026-11.io.nvmf4j:cli-ipv6";
        int port = FreePorts.pick();
        ok("subsystem", "create", "-n", nqn);
        assertThat(ok("listener", "add", "-n", nqn, "-a", "::1", "-s", String.valueOf(port)).out())
            .isEqualTo("listening for " + nqn + " on tcp [::1]:" + port + " (listening)\n");
        assertThat(ok("listener", "list", "-n", nqn).out()).isEqualTo("TRANSPORT  ADDRESS      STATE\ntcp        [::1]:" + port
            + "  listening\n");
        assertThat(ok("subsystem", "list").out()).contains(" tcp [::1]:" + port + "\n");
        assertThat(ok("subsystem", "get", "-n", nqn).out()).contains("listeners      tcp [::1]:" + port + "\n");
        assertThat(ok("ls").out()).contains("o- tcp [::1]:" + port + " [listening]\n");
        assertThat(ok("listener", "remove", "-n", nqn, "-a", "[::1]:" + port).out())
            .isEqualTo("removed listener tcp [::1]:" + port + " from " + nqn + "\n");

        assertThat(ok("referral", "add", "-a", "[2001:db8::7]:8010").out())
            .isEqualTo("added referral tcp [2001:db8::7]:8010\n");
        assertThat(ok("referral", "list").out()).contains("tcp        [2001:db8::7]:8010\n");
        assertThat(ok("referral", "remove", "-a", "2001:db8::7", "-s", "8010").out())
            .isEqualTo("removed referral tcp [2001:db8::7]:8010\n");
        ok("subsystem", "delete", "-n", nqn);
    }

    @Test
    void controllerListShowsAConnectedHost() throws Exception {
        try (NvmeController c = NvmeController.open("127.0.0.1", t.nvmePort, NQN, TestService.HOSTNQN, 15000, 2,
            TcpHostOptions.DEFAULT)) {
            String list = ok("controller", "list", "--nqn", NQN).out();
            assertThat(list.lines().findFirst().orElseThrow()).matches("CNTLID +HOSTNQN +ADDRESS +KATO-MS +IO-QUEUES");
            assertThat(list).containsPattern("\n\\d+ +" + TestService.HOSTNQN.replace(".", "\\.")
                + " +127\\.0\\.0\\.1:\\d+ +15000 +2\n");
            JsonNode j = json(ok("controller", "list", "--nqn", NQN, "--json"));
            assertThat(j.get(0).get("hostnqn").asText()).isEqualTo(TestService.HOSTNQN);
            assertThat(j.get(0).get("queues")).hasSize(3);
        }
    }

    @Test
    void ioHostsControllersSlowestAndLatencyAfterAHostsIo() throws Exception {
        try (NvmeController c = NvmeController.open("127.0.0.1", t.nvmePort, NQN, TestService.HOSTNQN, 0, 1,
            TcpHostOptions.DEFAULT)) {
            for (int i = 0; i < 3; i++) {
                assertThat(c.io(0).write(1, i, new byte[512]).ok()).isTrue();
            }
            assertThat(c.io(0).read(1, 5, 2).ok()).isTrue();
            // recorded as the response is flushed, just after the host has it: await the read
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            JsonNode hosts = json(ok("io", "hosts", "--json"));
            while ((hosts.isEmpty() || hosts.get(0).at("/io/reads").asLong() < 1) && System.nanoTime() < deadline) {
                Thread.sleep(20);
                hosts = json(ok("io", "hosts", "--json"));
            }
            assertThat(hosts.get(0).get("host").asText()).isEqualTo(TestService.HOSTNQN);
            assertThat(hosts.get(0).at("/io/writes").asLong()).isGreaterThanOrEqualTo(3);
            String table = ok("io", "hosts").out();
            assertThat(table.lines().findFirst().orElseThrow()).startsWith("HOST ").contains("WRITES");
            assertThat(table).contains(TestService.HOSTNQN);
            String ctrls = ok("io", "controllers", "--subsystem", NQN, "--host", TestService.HOSTNQN).out();
            assertThat(ctrls).containsPattern("\n" + NQN.replace(".", "\\.") + " +" + c.cntlid() + " +"
                + TestService.HOSTNQN.replace(".", "\\."));
            JsonNode slow = json(ok("io", "slowest", "--limit", "3", "--json"));
            assertThat(slow.size()).isBetween(1, 3);
            assertThat(ok("io", "slowest").out().lines().findFirst().orElseThrow()).startsWith("TIME ");
            JsonNode lat = json(ok("io", "latency", "-n", NQN, "--nsid", "1", "--json"));
            assertThat(lat.findValues("op")).extracting(JsonNode::asText).containsExactly("read", "write");
            assertThat(ok("io", "latency", "-n", NQN, "--nsid", "1").out()).contains("P99.9-US");
            Run bad = fails(1, "io", "slowest", "--limit", "65");
            assertThat(bad.err()).contains("limit").contains("must be 1..64, got 65");
        }
    }

    @Test
    void referralAddListRemove() {
        assertThat(ok("referral", "add", "-a", "192.0.2.7", "-s", "8010").out())
            .isEqualTo("added referral tcp 192.0.2.7:8010\n");
        assertThat(ok("referral", "list").out()).contains("TRANSPORT  ADDRESS\n")
            .contains("tcp        192.0.2.7:8010\n");
        assertThat(json(ok("referral", "list", "--json")).findValuesAsText("address")).contains("192.0.2.7");
        assertThat(ok("referral", "remove", "-a", "192.0.2.7", "-s", "8010").out())
            .isEqualTo("removed referral tcp 192.0.2.7:8010\n");
        assertThat(ok("referral", "list", "--json").out()).doesNotContain("192.0.2.7");
        // the default port is the discovery port
        assertThat(json(ok("referral", "add", "-a", "192.0.2.8", "--json")).get("port").asInt()).isEqualTo(8009);
        assertThat(json(ok("referral", "remove", "--traddr", "192.0.2.8", "--json"))).isEqualTo(Http.parse(
            "{\"removed\":{\"referral\":{\"transport\":\"tcp\",\"address\":\"192.0.2.8\",\"port\":8009}}}"));
    }

    @Test
    void transportGetAndSet() {
        assertThat(ok("transport", "get").out()).contains("tcp.inCapsuleDataSize  ").contains("tcp.maxQueueDepth      ");
        assertThat(json(ok("transport", "get", "--json")).get("tcp").has("mdtsBytes")).isTrue();
        Run set = ok("transport", "set", "tcp", "--max-queue-depth", "64");
        assertThat(set.out()).startsWith("stored; applies at the next start of the service\n")
            .containsPattern("(?m)^tcp\\.maxQueueDepth +64$");
        JsonNode j = json(ok("transport", "set", "tcp", "--max-queue-depth", "256", "--json"));
        assertThat(j.get("restartRequired").asBoolean()).isTrue();
        assertThat(j.get("tcp").get("maxQueueDepth").asInt()).isEqualTo(256);
    }

    @Test
    void namespaceAnaGroupMovesIt() {
        ok("bdev", "create", "null", "ana1", "--size", "1M");
        ok("ns", "add", "-n", NQN, "-b", "ana1", "--nsid", "12");
        assertThat(ok("ns", "ana-group", "-n", NQN, "--nsid", "12", "--group", "3").out())
            .isEqualTo("namespace 12 of " + NQN + " in ANA group 3\n");
        String ns = "/api/v1/subsystems/" + enc(NQN) + "/namespaces/12";
        assertThat(t.http.get(ns).json().get("anaGroup").asInt()).isEqualTo(3);
        assertThat(json(ok("ns", "ana-group", "-n", NQN, "--nsid", "12", "-g", "1", "--json")).get("anaGroup").asInt())
            .isEqualTo(1);
        ok("ns", "remove", "-n", NQN, "--nsid", "12");
        ok("bdev", "delete", "ana1");
    }

    @Test
    void namespaceReservationsModeIsSetThroughNvmfctlAndABadOneIsRefusedNamingTheField() {
        ok("bdev", "create", "malloc", "resv1", "--size", "1M");
        Run added = ok("ns", "add", "-n", NQN, "-b", "resv1", "--nsid", "12", "--reservations", "off");
        assertThat(added.out()).contains("reservations  off\n");
        JsonNode listed = json(ok("ns", "list", "--nqn", NQN, "--json"));
        JsonNode ns = null;
        for (JsonNode n : listed) {
            if (n.get("nsid").asInt() == 12) {
                ns = n;
            }
        }
        assertThat(ns).as("namespace 12 in ns list").isNotNull();
        assertThat(ns.get("reservations").asText()).isEqualTo("off");
        ok("ns", "remove", "-n", NQN, "--nsid", "12");
        assertThat(fails(1, "ns", "add", "-n", NQN, "-b", "resv1", "--nsid", "13", "--reservations", "everywhere")
            .err()).startsWith("nvmfctl: ").contains("reservations").contains("everywhere");
        ok("bdev", "delete", "resv1");
    }

    @Test
    void namespaceMaskingHostAddAndRemove() {
        String host = "nqn.2014-08.org.nvmexpress:uuid:0b7e5a10-0000-4000-8000-0000000000c1";
        ok("bdev", "create", "null", "mask1", "--size", "1M");
        ok("ns", "add", "-n", NQN, "-b", "mask1", "--nsid", "11", "--masked");
        String hosts = "/api/v1/subsystems/" + enc(NQN) + "/namespaces/11/hosts";
        assertThat(t.http.get(hosts).json()).isEmpty();
        assertThat(ok("ns", "host-add", "-n", NQN, "--nsid", "11", "-q", host).out())
            .isEqualTo("namespace 11 of " + NQN + " visible to " + host + "\n");
        assertThat(t.http.get(hosts).json().get(0).asText()).isEqualTo(host);
        assertThat(ok("ns", "host-remove", "-n", NQN, "--nsid", "11", "-q", host).out())
            .isEqualTo("namespace 11 of " + NQN + " masked from " + host + "\n");
        assertThat(t.http.get(hosts).json()).isEmpty();
        ok("ns", "remove", "-n", NQN, "--nsid", "11");
        ok("bdev", "delete", "mask1");
    }

    @Test
    void configExportAndImport() throws Exception {
        Run exported = ok("config", "export");
        assertThat(json(exported)).isEqualTo(t.http.get("/api/v1/config").json());
        Path file = dir.resolve("export.json");
        assertThat(ok("config", "export", "-o", file.toString()).out()).startsWith("wrote " + file + ": ");
        assertThat(json(ok("config", "export", "-o", file.toString(), "--json")))
            .isEqualTo(Http.parse("{\"wrote\":{\"file\":\"" + file + "\"}}"));
        assertThat(Http.parse(Files.readString(file))).isEqualTo(t.http.get("/api/v1/config").json());
        assertThat(Files.getPosixFilePermissions(file)).as("export files are mode 0600")
            .isEqualTo(PosixFilePermissions.fromString("rw-------"));
        Path older = Files.writeString(dir.resolve("older.json"), "{}", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(older, PosixFilePermissions.fromString("rw-r--r--"));
        ok("config", "export", "-o", older.toString());
        assertThat(Files.getPosixFilePermissions(older)).as("an existing 0644 file is made 0600")
            .isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(Http.parse(Files.readString(file)).get("api").has("token")).as("no token in an export").isFalse();

        String doc = Files.readString(file).replace("\"referrals\" : [", "\"referrals\" : [ {\"transport\":\"tcp\","
            + "\"address\":\"192.0.2.99\",\"port\":8009}" + (json(exported).get("referrals").isEmpty() ? "" : ","));
        Path changed = dir.resolve("import.json");
        Files.writeString(changed, doc);
        assertThat(ok("config", "import", changed.toString()).out()).startsWith("applied " + changed + ": ")
            .contains(" 1 referrals");
        assertThat(t.http.get("/api/v1/discovery/referrals").body()).contains("192.0.2.99");
        Files.writeString(changed, Files.readString(file));
        assertThat(json(ok("config", "import", changed.toString(), "--json")).get("referrals")).isEmpty();

        // a start-up setting changed: applied at the next start, and the line says which (the API's header)
        int cores = json(exported).get("cores").asInt();
        Files.writeString(changed, Files.readString(file).replace("\"cores\" : " + cores, "\"cores\" : " + (cores + 1)));
        assertThat(ok("config", "import", changed.toString()).out())
            .containsPattern("; at the next start \\(restart required\\): (.*, )?cores(,|\n)");
        Files.writeString(changed, Files.readString(file));
        assertThat(ok("config", "import", changed.toString()).out()).doesNotContainPattern("restart required.*cores");
    }

    @Test
    void globalOptionsMayFollowTheSubcommand() {
        Run r = Cli.runBare(Map.of(), "bdev", "get", "m0", "--url", url, "--state-dir", t.dir.toString(), "--json");
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(json(r).get("name").asText()).isEqualTo("m0");
    }

    @Test
    void tokenPrecedence() throws Exception {
        String token = t.service.apiToken().value();
        Path empty = Files.createDirectories(dir.resolve("empty-state"));
        Path tokenFile = dir.resolve("token");
        Files.writeString(tokenFile, token + "\n");
        Path wrongFile = dir.resolve("wrong-token");
        Files.writeString(wrongFile, "0".repeat(64));
        String[] base = {"--url", url, "--state-dir", empty.toString()};

        assertThat(Cli.runBare(Map.of("NVMF4J_TOKEN", token), concat(base, "bdev", "list")).code()).isZero();
        assertThat(Cli.runBare(Map.of(), concat(base, "--token-file", tokenFile.toString(), "bdev", "list")).code())
            .isZero();
        assertThat(Cli.runBare(Map.of(), concat(base, "--token", token, "bdev", "list")).code()).isZero();
        // --token beats NVMF4J_TOKEN beats --token-file beats <state-dir>/api-token
        Run envBeatsFile = Cli.runBare(Map.of("NVMF4J_TOKEN", "1".repeat(64)),
            concat(base, "--token-file", tokenFile.toString(), "bdev", "list"));
        assertThat(envBeatsFile.code()).isEqualTo(1);
        assertThat(envBeatsFile.err()).isEqualTo("nvmfctl: wrong bearer token; token from NVMF4J_TOKEN\n");
        Run optionBeatsEnv = Cli.runBare(Map.of("NVMF4J_TOKEN", "1".repeat(64)), concat(base, "--token", token,
            "bdev", "list"));
        assertThat(optionBeatsEnv.code()).isZero();
        Run fileBeatsStateDir = Cli.runBare(Map.of(), "--url", url, "--state-dir", t.dir.toString(), "--token-file",
            wrongFile.toString(), "bdev", "list");
        assertThat(fileBeatsStateDir.err()).isEqualTo("nvmfctl: wrong bearer token; token from " + wrongFile + "\n");
    }

    private static String[] concat(String[] a, String... b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Test
    void noTokenIsRefusedWithTheApiMessageAndWhereNvmfctlLooked() throws Exception {
        Path empty = Files.createDirectories(dir.resolve("no-token-state"));
        Run r = Cli.runBare(Map.of(), "--url", url, "--state-dir", empty.toString(), "bdev", "list");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).isEqualTo("nvmfctl: missing bearer token; no token: give --token, NVMF4J_TOKEN or "
            + "--token-file, or --state-dir of the service (cannot read " + empty.resolve("api-token")
            + ": no such file)\n");
    }

    @Test
    void apiErrorsPrintTheApiMessageAndExit1() {
        assertThat(fails(1, "bdev", "get", "nope").err()).isEqualTo("nvmfctl: no bdev nope\n");
        assertThat(fails(1, "bdev", "delete", "m0").err()).isEqualTo("nvmfctl: bdev m0 backs namespace 1 of " + NQN + "\n");
        assertThat(fails(1, "bdev", "create", "malloc", "bad", "--num-blocks", "8", "--block-size", "520").err())
            .isEqualTo("nvmfctl: blockSize: must be 512 or 4096, got 520\n");
        assertThat(fails(1, "ns", "add", "--nqn", NQN, "--bdev", "ghost").err())
            .isEqualTo("nvmfctl: bdev: no bdev named 'ghost'\n");
        assertThat(fails(1, "subsystem", "get", "-n", "nqn.2026-11.io.nvmf4j:none").err())
            .isEqualTo("nvmfctl: no subsystem nqn.2026-11.io.nvmf4j:none\n");
    }

    @Test
    void serviceNotRunningExits3() {
        int port = FreePorts.pick();
        Run r = Cli.runBare(Map.of(), "--url", "http://127.0.0.1:" + port, "--token", "x".repeat(20), "bdev", "list");
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).startsWith("nvmfctl: cannot connect to http://127.0.0.1:" + port + ": ")
            .doesNotContain("Exception").hasLineCount(1);
        assertThat(Cli.runBare(Map.of(), "--url", "http://127.0.0.1:" + port, "health").code()).isEqualTo(3);
    }

    @Test
    void badUsageExits2WithOneLineAndWhereToReadMore() {
        assertThat(fails(2, "bdev").err()).isEqualTo("nvmfctl: missing subcommand: one of list, get, create, grow, "
            + "delete\nTry 'nvmfctl bdev --help' for more information.\n");
        assertThat(fails(2).err()).startsWith("nvmfctl: missing command: one of ls, bdev, pool, volume, snapshot, subsystem, ")
            .endsWith("\nTry 'nvmfctl --help' for more information.\n").doesNotContain("Usage").doesNotContain("import,");
        assertThat(fails(2, "bdev", "list", "--colour").err()).isEqualTo("nvmfctl: Unknown option: '--colour'\n"
            + "Try 'nvmfctl bdev list --help' for more information.\n");
        assertThat(fails(2, "ns", "add", "--bdev", "m0").err()).isEqualTo("nvmfctl: Missing required option: "
            + "'--nqn=NQN'\nTry 'nvmfctl ns add --help' for more information.\n");
        assertThat(fails(2, "subsystem", "get", NQN).err()).startsWith("nvmfctl: Missing required option: '--nqn=NQN' "
            + "(NQNs are options: -n NQN for the subsystem, -q HOSTNQN for a host)\n");
        assertThat(fails(2, "lisner", "list").err()).startsWith("nvmfctl: Unmatched argument")
            .contains("did you mean: listener");
        assertThat(fails(2, "bdev", "create", "malloc", "x", "--size", "lots").err())
            .contains("'lots' is not a size").endsWith("Try 'nvmfctl bdev create --help' for more information.\n");
        assertThat(fails(2, "bdev", "create", "tape", "x", "--size", "1M").err())
            .isEqualTo("nvmfctl: TYPE must be malloc, null, file or rbd, got 'tape'\n");
        assertThat(fails(2, "bdev", "create", "malloc", "x").err())
            .isEqualTo("nvmfctl: a malloc bdev needs --size or --num-blocks\n");
        assertThat(fails(2, "bdev", "create", "rbd", "x", "--pool", "rbd").err())
            .isEqualTo("nvmfctl: an rbd bdev needs --pool and --image\n");
        assertThat(fails(2, "bdev", "create", "malloc", "x", "--size", "1M", "--image", "i").err())
            .isEqualTo("nvmfctl: --pool, --image, --ceph-conf, --client, --keyring, --create, --exclusive-lock, "
                + "--osd-op-timeout and --cache are for rbd bdevs only\n");
        assertThat(fails(2, "bdev", "create", "null", "x", "--size", "1M", "--exclusive-lock").err())
            .isEqualTo("nvmfctl: --pool, --image, --ceph-conf, --client, --keyring, --create, --exclusive-lock, "
                + "--osd-op-timeout and --cache are for rbd bdevs only\n");
        assertThat(Cli.runBare(Map.of(), "--url", "ftp://x", "bdev", "list").err())
            .isEqualTo("nvmfctl: --url must start with http:// or https://, got ftp://x\n");
        assertThat(fails(2, "config", "import", dir.resolve("absent.json").toString()).err())
            .startsWith("nvmfctl: cannot read " + dir.resolve("absent.json"));
        assertThat(fails(2, "subsystem", "allow-any-host", "-n", NQN, "maybe").err())
            .isEqualTo("nvmfctl: allow-any-host takes yes or no, got 'maybe'\n");
        assertThat(fails(2, "listener", "add", "-n", NQN, "-a", "[::1", "-s", "1").err())
            .startsWith("nvmfctl: -a [::1: no ']' after an IPv6 address\nTry 'nvmfctl listener add --help'");
        assertThat(fails(2, "listener", "add", "-n", NQN, "-a", "127.0.0.1:4420", "-s", "4421").err())
            .startsWith("nvmfctl: -a 127.0.0.1:4420 names port 4420 but -s says 4421\n");
        assertThat(fails(2, "listener", "add", "-n", NQN, "-a", "127.0.0.1:http").err())
            .startsWith("nvmfctl: -a 127.0.0.1:http: 'http' is not a port number\n");
        assertThat(fails(2, "help", "listener", "nope").err()).startsWith("nvmfctl: unknown command 'listener nope': "
            + "expected one of list, add, remove, ana-state\n");
    }

    /** With --json an error is one JSON object on stderr (stdout stays empty); the exit codes do not change. */
    @Test
    void jsonErrors() {
        Run notFound = fails(1, "bdev", "get", "nope", "--json");
        assertThat(notFound.out()).isEmpty();
        assertThat(Http.parse(notFound.err())).isEqualTo(Http.parse(
            "{\"error\":{\"exitCode\":1,\"status\":404,\"message\":\"no bdev nope\"}}"));
        Run badField = fails(1, "--json", "bdev", "create", "malloc", "bad", "--num-blocks", "8", "--block-size", "520");
        JsonNode e = Http.parse(badField.err()).get("error");
        assertThat(e.get("status").asInt()).isEqualTo(400);
        assertThat(e.get("field").asText()).isEqualTo("blockSize");
        assertThat(e.get("message").asText()).contains("must be 512 or 4096, got 520");
        Run usage = fails(2, "bdev", "list", "--colour", "--json");
        assertThat(usage.out()).isEmpty();
        assertThat(Http.parse(usage.err())).isEqualTo(Http.parse("{\"error\":{\"exitCode\":2,\"message\":"
            + "\"Unknown option: '--colour'\",\"help\":\"nvmfctl bdev list --help\"}}"));
        int port = FreePorts.pick();
        Run down = Cli.runBare(Map.of(), "--json", "--url", "http://127.0.0.1:" + port, "--token", "x".repeat(20),
            "bdev", "list");
        assertThat(down.code()).isEqualTo(3);
        JsonNode d = Http.parse(down.err()).get("error");
        assertThat(d.get("exitCode").asInt()).isEqualTo(3);
        assertThat(d.has("status")).as("no HTTP answer, no status").isFalse();
        assertThat(d.get("message").asText()).startsWith("cannot connect to http://127.0.0.1:" + port);
    }

    /** nvmfctl ls: the tree of everything, and --json the same as one document. */
    @Test
    void lsShowsTheWholeTree() throws Exception {
        String nqn = "nqn.2026-11.io.nvmf4j:cli-ls";
        String host = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000d1";
        int port = FreePorts.pick();
        ok("bdev", "create", "malloc", "lsb", "--size", "2M");
        ok("subsystem", "create", "-n", nqn, "--serial", "SN-LS", "-q", host);  // the last subsystem
        ok("ns", "add", "-n", nqn, "-b", "lsb", "--nsid", "3", "--uuid", "3c9e5a52-7f0e-4b8b-9a43-1f7a1e2f9d33");
        ok("listener", "add", "-n", nqn, "-a", "127.0.0.1", "-s", String.valueOf(port));
        try (NvmeController c = NvmeController.open("127.0.0.1", t.nvmePort, NQN, TestService.HOSTNQN, 15000, 2,
            TcpHostOptions.DEFAULT)) {
            String tree = ok("ls").out();
            assertThat(tree).startsWith("o- / [" + url + "]\n  o- subsystems [");
            assertThat(tree).contains("""
                  | o- nqn.2026-11.io.nvmf4j:cli-ls [serial SN-LS, model nvmf4j]
                  |   o- namespaces [1]
                  |   | o- 3 [bdev lsb, 2 MiB, uuid 3c9e5a52-7f0e-4b8b-9a43-1f7a1e2f9d33]
                  |   o- hosts [1]
                  |   | o- nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000d1
                  |   o- listeners [1]
                  |   | o- tcp 127.0.0.1:%d [listening]
                  |   o- controllers [0]
                  o- bdevs [%d]
                """.formatted(port, json(ok("bdev", "list", "--json")).size()));
            assertThat(tree).containsPattern("o- controllers \\[1]\n[ |]+o- \\d+ \\[host "
                + TestService.HOSTNQN.replace(".", "\\.") + ", 2 I/O queues, 127\\.0\\.0\\.1:\\d+]\n");
            assertThat(tree).contains("o- lsb [malloc, 2 MiB, 512 B blocks, used by " + nqn + "/3]\n")
                .containsPattern("\n  o- referrals \\[\\d+]\n");

            JsonNode j = json(ok("ls", "--json"));
            assertThat(j.fieldNames()).toIterable().containsExactly("subsystems", "bdevs", "pools", "referrals");
            JsonNode sub = null;
            JsonNode def = null;
            for (JsonNode s : j.get("subsystems")) {
                sub = s.get("nqn").asText().equals(nqn) ? s : sub;
                def = s.get("nqn").asText().equals(NQN) ? s : def;
            }
            assertThat(sub).isNotNull();
            assertThat(sub.get("serial").asText()).isEqualTo("SN-LS");
            assertThat(sub.get("hosts").get(0).asText()).isEqualTo(host);
            assertThat(sub.get("namespaces").get(0).get("bdev").asText()).isEqualTo("lsb");
            assertThat(sub.get("listeners").get(0).get("port").asInt()).isEqualTo(port);
            assertThat(sub.get("controllers")).isEmpty();
            assertThat(def.get("controllers").get(0).get("hostnqn").asText()).isEqualTo(TestService.HOSTNQN);
            assertThat(j.get("bdevs").findValuesAsText("name")).contains("lsb");
        } finally {
            ok("subsystem", "delete", "-n", nqn);
            ok("bdev", "delete", "lsb");
        }
    }
}

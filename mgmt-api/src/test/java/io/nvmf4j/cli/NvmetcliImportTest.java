package io.nvmf4j.cli;

import io.nvmf4j.testhost.FreePorts;
import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.cli.Cli.Run;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.service.api.TestService;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code nvmfctl import --nvmetcli}: the sample nvmetcli config.json (test resources: two subsystems,
 * one open to any host and one with allowed hosts, three file namespaces, a tcp and an rdma port, a
 * referral) converts to exactly the expected document with exactly the expected warnings; --apply puts
 * it on a running service (the rdma listener dropped with a warning); unsupported parts are warnings.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NvmetcliImportTest {
    private static final String VAULT = "nqn.2014-08.org.example:vault";
    private static final String SCRATCH = "nqn.2014-08.org.example:scratch";
    private static final String HOST1 = "nqn.2014-08.org.nvmexpress:uuid:9a3f6c1e-2b4d-4e8f-a1b2-c3d4e5f60001";
    private static final List<String> SAMPLE_WARNINGS = List.of(
        "nvmfctl: warning: subsystems[0] " + SCRATCH + ": attr.version=1.3 not imported: nvmf4j reports its own "
            + "NVMe version",
        "nvmfctl: warning: subsystems[1] " + VAULT + ": attr.version=1.3 not imported: nvmf4j reports its own "
            + "NVMe version",
        "nvmfctl: warning: ports[0] (portid 1): param.inline_data_size=16384 not imported: nvmf4j has one "
            + "in-capsule data size for all TCP listeners (nvmfctl transport set tcp --in-capsule-data-size)");

    @TempDir
    Path dir;
    private Path images;
    private Path sample;
    private int tcpPort;

    @BeforeEach
    void writeSample() throws IOException {
        images = Files.createDirectories(dir.resolve("images"));
        for (String name : new String[] {"scratch", "vault-a", "vault-b"}) {
            try (RandomAccessFile f = new RandomAccessFile(images.resolve(name + ".img").toFile(), "rw")) {
                f.setLength(1 << 20);
            }
        }
        tcpPort = FreePorts.pick();
        sample = dir.resolve("config.json");
        Files.writeString(sample, resource("config.json"));
    }

    private String resource(String name) throws IOException {
        try (InputStream in = getClass().getResourceAsStream("/nvmetcli/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("@DIR@", images.toString())
                .replace("@TCP_PORT@", String.valueOf(tcpPort));
        }
    }

    private static List<String> lines(String s) {
        return s.lines().toList();
    }

    @Test
    void convertsTheSampleToExactlyTheExpectedDocument() throws Exception {
        Run r = Cli.runBare(Map.of(), "import-nvmetcli", sample.toString());
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(r.out()).isEqualTo(resource("expected.json"));
        assertThat(lines(r.err())).containsExactlyElementsOf(SAMPLE_WARNINGS);
    }

    @Test
    void blockSizeOption() {
        Run r = Cli.runBare(Map.of(), "import-nvmetcli", sample.toString(), "--block-size", "4096");
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(Http.parse(r.out()).get("bdevs").findValuesAsText("blockSize")).containsOnly("4096");
        assertThat(Cli.runBare(Map.of(), "import-nvmetcli", sample.toString(), "--block-size", "1000").code())
            .isEqualTo(2);
    }

    @Test
    void applyReplacesTheStorageOfARunningTargetKeepingTheRdmaListener() throws Exception {
        // the operator allows the images' directory (the API cannot: an import keeps the storage section)
        try (TestService t = TestService.start(dir.resolve("state"),
            c -> c.storage = StorageConfig.directories(images.toString()))) {
            JsonNode before = t.http.get("/api/v1/config").json();
            Cli cli = new Cli(Map.of(), "--url", "http://127.0.0.1:" + t.service.apiPort(),
                "--state-dir", t.dir.toString());
            Run r = cli.run("import-nvmetcli", sample.toString(), "--apply");
            assertThat(r.code()).as("%s", r).isZero();
            assertThat(r.out()).isEqualTo("applied " + sample + ": 3 bdevs, 2 subsystems, 3 namespaces, 3 listeners, "
                + "1 referrals\n");
            // the target accepts rdma listeners now (on a host without an RDMA device it logs why it cannot serve them)
            assertThat(lines(r.err())).containsExactlyElementsOf(SAMPLE_WARNINGS);

            JsonNode live = t.http.get("/api/v1/config").json();
            JsonNode expected = Http.parse(resource("expected.json"));
            assertThat(live.get("subsystems").findValuesAsText("nqn")).containsExactly(SCRATCH, VAULT);
            JsonNode vault = live.get("subsystems").get(1);
            assertThat(vault.get("listeners")).isEqualTo(Http.parse(
                "[{\"transport\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":" + tcpPort + "},"
                    + "{\"transport\":\"rdma\",\"address\":\"192.0.2.10\",\"port\":4420}]"));
            assertThat(vault.get("namespaces")).isEqualTo(expected.get("subsystems").get(1).get("namespaces"));
            assertThat(vault.get("hosts")).isEqualTo(expected.get("subsystems").get(1).get("hosts"));
            assertThat(vault.get("serial").asText()).isEqualTo("0c7a19e4d2b85f31");
            assertThat(live.get("subsystems").get(0).get("namespaces").get(0).get("uuid").asText())
                .isEqualTo("4f1d2c3b-5a69-4788-9abc-def012345601");
            assertThat(live.get("referrals")).isEqualTo(expected.get("referrals"));
            assertThat(live.get("bdevs").findValuesAsText("name")).containsExactly("scratch-ns1", "vault-ns1", "vault-ns2");
            // the service's own sections are kept: same API port and token, same cores and tcp options
            assertThat(live.get("api")).isEqualTo(before.get("api"));
            assertThat(live.get("cores")).isEqualTo(before.get("cores"));
            assertThat(live.get("tcp")).isEqualTo(before.get("tcp"));
            assertThat(t.fileJson()).isEqualTo(t.liveJson());

            // an allowed host reaches the imported namespaces over the imported tcp listener
            try (NvmeController c = NvmeController.open("127.0.0.1", tcpPort, VAULT, HOST1, 15000, 1,
                TcpHostOptions.DEFAULT)) {
                assertThat(c.cntlid()).isBetween(16, 32);
            }
        }
    }

    @Test
    void applyThatTheTargetRefusesChangesNothingAndExits1() throws Exception {
        Files.delete(images.resolve("vault-b.img"));
        try (TestService t = TestService.start(dir.resolve("state"), c -> { })) {
            String before = t.liveJson();
            Cli cli = new Cli(Map.of(), "--url", "http://127.0.0.1:" + t.service.apiPort(),
                "--state-dir", t.dir.toString());
            Run r = cli.run("import-nvmetcli", sample.toString(), "--apply");
            assertThat(r.code()).as("%s", r).isEqualTo(1);
            assertThat(r.out()).isEmpty();
            List<String> err = lines(r.err());
            assertThat(err).contains("nvmfctl: warning: subsystems[1] " + VAULT + " namespaces[1] (nsid 2): device path "
                + images.resolve("vault-b.img") + " does not exist here; the target refuses the bdev until it does");
            assertThat(err.get(err.size() - 1)).startsWith("nvmfctl: ").contains("vault-b.img")
                .doesNotContain("Exception");
            assertThat(t.liveJson()).isEqualTo(before);
        }
    }

    @Test
    void unsupportedPartsAreWarningsNeverDroppedSilently() throws Exception {
        Path file = dir.resolve("odd.json");
        Files.writeString(file, """
            {
              "hosts": [{"nqn": "nqn.2014-08.org.nvmexpress:uuid:h1", "dhchap": {"key": "DHHC-1:00:abc:", "hash": "hmac(sha256)"}},
                        {"nqn": "nqn.2014-08.org.nvmexpress:uuid:h2"}],
              "ports": [
                {"portid": 1, "addr": {"trtype": "loop", "adrfam": "", "traddr": "", "trsvcid": "", "treq": "not specified"},
                 "subsystems": ["nqn.2014-08.org.example:odd"], "referrals": [], "ana_groups": []},
                {"portid": 2, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "10.0.0.1", "trsvcid": "4420",
                 "treq": "required", "tsas": "tls1.3"},
                 "ana_groups": [{"grpid": 1, "ana": {"state": "optimized"}}, {"grpid": 2, "ana": {"state": "inaccessible"}}],
                 "param": {"max_queue_size": "64"},
                 "subsystems": [],
                 "referrals": [{"name": "r1", "enable": 0, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "10.0.0.9", "trsvcid": "8009"}}]}
              ],
              "subsystems": [
                {"nqn": "nqn.2014-08.org.example:odd", "allowed_hosts": ["nqn.2014-08.org.nvmexpress:uuid:h1"],
                 "attr": {"allow_any_host": "0", "pi_enable": "1", "qid_max": "16"},
                 "passthru": [{"device": {"path": "/dev/nvme0"}, "enable": 1}],
                 "namespaces": [
                   {"nsid": 1, "enable": 0, "device": {"path": "/dev/null"}},
                   {"nsid": 2, "enable": 1, "ana_grpid": 2, "device": {"path": "/dev/null", "p2pmem": "auto"}, "resv": {"enable": "1"}}
                 ]}
              ],
              "extra": {}
            }
            """);
        Run r = Cli.runBare(Map.of(), "import-nvmetcli", file.toString());
        assertThat(r.code()).as("%s", r).isZero();
        String odd = "subsystems[0] nqn.2014-08.org.example:odd";
        assertThat(lines(r.err())).containsExactly(
            "nvmfctl: warning: extra: not an nvmetcli section, ignored",
            "nvmfctl: warning: " + odd + ": attr.pi_enable=1: protection information is not supported, not imported",
            "nvmfctl: warning: " + odd + ": attr.qid_max=16 is not supported, not imported",
            "nvmfctl: warning: " + odd + ": passthru (a whole NVMe controller exported as is) is not supported, "
                + "not imported",
            "nvmfctl: warning: " + odd + " namespaces[0] (nsid 1): disabled in nvmetcli (enable=0), not imported",
            "nvmfctl: warning: " + odd + " namespaces[1] (nsid 2): device.p2pmem=auto is not supported, not imported",
            "nvmfctl: warning: " + odd + " namespaces[1] (nsid 2): ANA group 2 is not supported (ANA), not imported",
            "nvmfctl: warning: " + odd + " namespaces[1] (nsid 2): resv.enable=1: reservations are not supported, "
                + "not imported",
            "nvmfctl: warning: ports[0] (portid 1): transport 'loop' is not supported (tcp and rdma are), "
                + "loop : not imported",
            "nvmfctl: warning: ports[1] (portid 2): " + tlsImported("required", "required"),
            "nvmfctl: warning: ports[1] (portid 2): ANA group 2 (inaccessible) is not supported (ANA), not imported",
            "nvmfctl: warning: ports[1] (portid 2): param.max_queue_size=64 is not supported, not imported",
            "nvmfctl: warning: ports[1] (portid 2): exports no subsystem; nvmf4j's discovery service listens only "
                + "on subsystem listeners, not imported",
            "nvmfctl: warning: ports[1] (portid 2) referrals[0] r1: disabled in nvmetcli (enable=0), not imported",
            "nvmfctl: warning: hosts[0] nqn.2014-08.org.nvmexpress:uuid:h1: DH-HMAC-CHAP keys are imported only with "
                + "--key-dir DIR (nvmf4j reads keys from files of mode 0600); the host is allowed without "
                + "authentication",
            "nvmfctl: warning: hosts[1] nqn.2014-08.org.nvmexpress:uuid:h2: not allowed on any subsystem (nvmf4j "
                + "keeps hosts per subsystem), not imported");
        JsonNode doc = Http.parse(r.out());
        JsonNode sub = doc.get("subsystems").get(0);
        assertThat(sub.get("namespaces").findValuesAsText("nsid")).containsExactly("2");
        assertThat(sub.get("hosts")).hasSize(1);
        assertThat(sub.get("listeners")).isEmpty();
        assertThat(doc.get("referrals")).isEmpty();
    }

    /** The warning of a TLS port imported as a secure channel (the PSKs stay in the kernel keyring). */
    private static String tlsImported(String treq, String channel) {
        return "addr.tsas=tls1.3 (addr.treq " + treq + ") imported as secureChannel " + channel + "; the hosts' TLS "
            + "PSKs are in the kernel keyring, not in nvmetcli's file: give each host its PSK with nvmfctl host add -n "
            + "NQN -q HOSTNQN --tls-key FILE (the key nvme gen-tls-key printed), and -n "
            + "nqn.2014-08.org.nvmexpress.discovery for nvme discover --tls";
    }

    /**
     * nvmet's TLS ports (addr_tsas tls1.3) become listeners with a secure channel: required, as nvmet makes TREQ when
     * it is not specified or says required; optional with TREQ not required. A host's inline DH-HMAC-CHAP keys go
     * with --key-dir into files of mode 0600 that the hostKeys of the subsystems allowing it name; nvmet's default
     * hash and DH group say nothing, others are warnings; an existing file with another key is never overwritten.
     */
    @Test
    void tlsPortsBecomeSecureChannelsAndHostKeysGoToTheKeyDirectory() throws Exception {
        String key = io.nvmf4j.auth.DhchapKey.format(1, "nvmf4j-import-dhchap-key-32-byte".getBytes(
            StandardCharsets.US_ASCII));
        String ctrlKey = io.nvmf4j.auth.DhchapKey.format(0, "nvmf4j-import-dhchap-ctrl-32-byt".getBytes(
            StandardCharsets.US_ASCII));
        String h1 = "nqn.2014-08.org.nvmexpress:uuid:h1";
        String h2 = "nqn.2014-08.org.nvmexpress:uuid:h2";
        String sub = "nqn.2014-08.org.example:tls";
        Path file = dir.resolve("tls.json");
        Files.writeString(file, """
            {
              "hosts": [{"nqn": "%s", "dhchap": {"key": "%s", "ctrl_key": "%s", "hash": "hmac(sha256)", "dhgroup": "null"}},
                        {"nqn": "%s", "dhchap": {"key": "", "ctrl_key": "", "hash": "hmac(sha512)", "dhgroup": "ffdhe2048"}}],
              "ports": [
                {"portid": 1, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "10.0.0.1", "trsvcid": "4420",
                 "treq": "not specified", "tsas": "tls1.3"}, "subsystems": ["%s"], "referrals": [], "ana_groups": []},
                {"portid": 2, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "10.0.0.1", "trsvcid": "4421",
                 "treq": "not required", "tsas": "tls1.3"}, "subsystems": ["%s"], "referrals": [], "ana_groups": []},
                {"portid": 3, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "10.0.0.1", "trsvcid": "4422",
                 "treq": "required", "tsas": "tls1.3"}, "subsystems": ["%s"], "referrals": [], "ana_groups": []},
                {"portid": 4, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "10.0.0.1", "trsvcid": "4423",
                 "treq": "not specified", "tsas": "none"}, "subsystems": ["%s"], "referrals": [], "ana_groups": []}
              ],
              "subsystems": [{"nqn": "%s", "allowed_hosts": ["%s", "%s"], "attr": {"allow_any_host": "0"},
                              "namespaces": []}]
            }
            """.formatted(h1, key, ctrlKey, h2, sub, sub, sub, sub, sub, h1, h2));
        Path keys = dir.resolve("keys");
        Run r = Cli.runBare(Map.of(), "import-nvmetcli", file.toString(), "--key-dir", keys.toString());
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(lines(r.err())).containsExactly(
            "nvmfctl: warning: ports[0] (portid 1): " + tlsImported("not specified", "required"),
            "nvmfctl: warning: ports[1] (portid 2): " + tlsImported("not required", "optional"),
            "nvmfctl: warning: ports[2] (portid 3): " + tlsImported("required", "required"),
            "nvmfctl: warning: hosts[1] " + h2 + ": dhchap.hash=hmac(sha512): per-host hash restrictions are not "
                + "supported (nvmf4j takes the host's choice), not imported",
            "nvmfctl: warning: hosts[1] " + h2 + ": dhchap.dhgroup=ffdhe2048: per-host DH group restrictions are not "
                + "supported (nvmf4j takes the host's choice), not imported");
        JsonNode s = Http.parse(r.out()).get("subsystems").get(0);
        assertThat(s.get("listeners").findValuesAsText("port")).containsExactly("4420", "4421", "4422", "4423");
        assertThat(s.get("listeners").get(0).get("secureChannel").asText()).isEqualTo("required");
        assertThat(s.get("listeners").get(1).get("secureChannel").asText()).isEqualTo("optional");
        assertThat(s.get("listeners").get(2).get("secureChannel").asText()).isEqualTo("required");
        assertThat(s.get("listeners").get(3).has("secureChannel")).as("tsas none: plain").isFalse();
        Path keyFile = keys.resolve("nqn.2014-08.org.nvmexpress_uuid_h1.key");
        Path ctrlKeyFile = keys.resolve("nqn.2014-08.org.nvmexpress_uuid_h1.ctrl-key");
        assertThat(s.get("hostKeys")).isEqualTo(Http.parse("[{\"host\": \"" + h1 + "\", \"dhchapKey\": \""
            + keyFile + "\", \"dhchapCtrlKey\": \"" + ctrlKeyFile + "\"}]"));
        assertThat(Files.readString(keyFile).strip()).isEqualTo(key);
        assertThat(Files.readString(ctrlKeyFile).strip()).isEqualTo(ctrlKey);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(keyFile)))
            .isEqualTo("rw-------");
        assertThat(io.nvmf4j.auth.KeyFiles.problem(keyFile.toString())).as("the service's own key file checks")
            .isNull();

        Run again = Cli.runBare(Map.of(), "import-nvmetcli", file.toString(), "--key-dir", keys.toString());
        assertThat(again.out()).as("the same keys there already: kept").isEqualTo(r.out());
        Files.writeString(keyFile, io.nvmf4j.auth.DhchapKey.format(1, new byte[32]));
        Run other = Cli.runBare(Map.of(), "import-nvmetcli", file.toString(), "--key-dir", keys.toString());
        assertThat(lines(other.err())).contains("nvmfctl: warning: hosts[0] " + h1 + ": DH-HMAC-CHAP keys not imported ("
            + keyFile + " exists and holds another key; not overwritten); the host is allowed without authentication");
        assertThat(Http.parse(other.out()).get("subsystems").get(0).has("hostKeys")).as("none imported").isFalse();
    }

    @Test
    void unreadableInputIsAUsageError() throws Exception {
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{ not json");
        Run r = Cli.runBare(Map.of(), "import-nvmetcli", bad.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("nvmfctl: cannot read " + bad + ": ").hasLineCount(1);
        Files.writeString(bad, "[]");
        assertThat(Cli.runBare(Map.of(), "import-nvmetcli", bad.toString()).err())
            .isEqualTo("nvmfctl: not an nvmetcli configuration: expected a JSON object with hosts, ports and "
                + "subsystems\n");
        assertThat(Cli.runBare(Map.of(), "import-nvmetcli").code()).isEqualTo(2);
        assertThat(Cli.runBare(Map.of(), "import").code()).isEqualTo(2);
    }

    /** The old spelling 'import --nvmetcli FILE' still converts, says on stderr that it is deprecated, and is hidden. */
    @Test
    void theOldImportSpellingWorksWithADeprecationWarning() {
        Run current = Cli.runBare(Map.of(), "import-nvmetcli", sample.toString());
        Run old = Cli.runBare(Map.of(), "import", "--nvmetcli", sample.toString());
        assertThat(old.code()).as("%s", old).isZero();
        assertThat(old.out()).isEqualTo(current.out());
        assertThat(old.err()).startsWith("nvmfctl: warning: 'nvmfctl import --nvmetcli FILE' is deprecated: use "
            + "'nvmfctl import-nvmetcli FILE' (and 'nvmfctl config import FILE' for an nvmf4j document)\n")
            .endsWith(current.err());
        Run json = Cli.runBare(Map.of(), "--json", "import", "--nvmetcli", sample.toString());
        assertThat(json.err().lines().findFirst().orElseThrow())
            .startsWith("{\"warning\":\"'nvmfctl import --nvmetcli FILE' is deprecated");
        Run help = Cli.runBare(Map.of(), "--help");
        assertThat(help.out()).contains("  import-nvmetcli  ").doesNotContain("  import  ");
    }
}

package io.nvmf4j.service.profile;

import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** setup --profile under a --root: what it writes, what a dry run only prints, and what it refuses. */
class SetupCommandTest {
    @TempDir
    Path root;

    static TargetRun setup(String... args) {
        return TargetRun.of("setup", args);
    }

    private Path at(String p) {
        return root.resolve(p.substring(1));
    }

    private void machine() {
        FakeMachine.arm(root, 16, "0xd41", 32, 24, 0).modules("ib_core").file("/proc/sys/vm/nr_hugepages", "0\n");
    }

    /**
     * The API's TLS key is for the service's group too: the unit runs as nvmf4j, and a key only root could read
     * stopped the service's start on an arm64 guest set up by setup (api.tlsKey: cannot read ... permission
     * denied). Where the group is missing, the key stays root's alone and setup says what to do.
     */
    @Test
    void theTlsKeyIsReadableByTheServiceGroupAndByNoOneElse() throws Exception {
        machine();
        Profile p = Profile.load("bluefield2");
        TargetConfig preset = p.config(java.util.List.of("192.0.2.10"), "127.0.0.1");
        // the group as the root (an image) names it in its /etc/group: as root a gid no file here has (so the
        // check sees the change), otherwise one this process's user is in (a change it may make)
        Path probe = Files.createTempFile(root, "group", ".probe");
        GroupPrincipal mine = Files.readAttributes(probe, PosixFileAttributes.class).group();
        int gid = "root".equals(System.getProperty("user.name")) ? 4242
            : (Integer) Files.getAttribute(probe, "unix:gid");
        Files.createDirectories(at("/etc"));
        Files.writeString(at("/etc/group"), "root:x:0:\n" + mine.getName() + "-svc:x:" + gid + ":\n");
        StringWriter text = new StringWriter();
        try (PrintWriter out = new PrintWriter(text)) {
            new ProfileSetup(p, Sizing.asShipped(p, preset), root, false, out, mine.getName() + "-svc").run();
        }
        Path key = at(preset.api.tlsKey);
        assertThat(Files.getAttribute(key, "unix:gid")).isEqualTo(gid);
        assertThat(Files.getPosixFilePermissions(key)).isEqualTo(PosixFilePermissions.fromString("rw-r-----"));
        assertThat(text.toString()).contains("is readable by group " + mine.getName() + "-svc");

        // no such group: root's alone, and the line that says how to hand it over
        Files.delete(key);
        Files.delete(at(preset.api.tlsCert));
        text = new StringWriter();
        try (PrintWriter out = new PrintWriter(text)) {
            new ProfileSetup(p, Sizing.asShipped(p, preset), root, false, out, "nvmf4j-no-such-group").run();
        }
        assertThat(Files.getPosixFilePermissions(key)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(text.toString()).contains("warning: no group nvmf4j-no-such-group on this machine",
            "chmod 0640");
    }

    /**
     * An image's /etc/group as it may be: comments, blank and short lines, a gid that is not a number, the name as a
     * prefix of another; only a well-formed line of exactly that name counts, and a missing file is no group.
     */
    @Test
    void theGroupFileOfAnImageIsReadLineByLineAndABadLineIsNoGroup() throws Exception {
        Path f = root.resolve("group");
        assertThat(ProfileSetup.gidIn(f, "nvmf4j")).as("no file").isNull();
        Files.writeString(f, "# a comment\n\nnvmf4j\nnvmf4j:x\nnvmf4j:x:seven:\nnvmf4j:x:-1:\nnvmf4j:x:12345678901:\n"
            + "nvmf4jx:x:500:\n");
        assertThat(ProfileSetup.gidIn(f, "nvmf4j")).as("only bad lines and another name").isNull();
        Files.writeString(f, "nvmf4j:x:seven:\nnvmf4j:x:998:\nnvmf4j:x:999:\n",
            java.nio.file.StandardOpenOption.APPEND);
        assertThat(ProfileSetup.gidIn(f, "nvmf4j")).as("the first well-formed line").isEqualTo(998);
    }

    @Test
    void dryRunPrintsEveryStepAndWritesNothing() throws Exception {
        machine();
        long before;
        try (Stream<Path> s = Files.walk(root)) {
            before = s.count();
        }
        TargetRun r = setup("--profile", "bluefield3", "--uplink", "192.0.2.10", "--uplink", "198.51.100.10",
            "--mgmt-address", "203.0.113.5", "--dry-run", "--root", root.toString());
        assertThat(r.exit()).as(r.err()).isZero();
        long pages = Sizing.asShipped(Profile.load("bluefield3"), Profile.load("bluefield3").preset()).hugepages;
        assertThat(r.out()).contains("profile bluefield3 (NVIDIA BlueField-3 DPU): 14 poll group(s) on CPUs 2-15",
            "would reserve hugepages: echo " + pages + " > /proc/sys/vm/nr_hugepages (now 0)",
            "would write /etc/sysctl.d/60-nvmf4j-hugepages.conf:", "vm.nr_hugepages = " + pages,
            "would write /var/lib/nvmf4j/config.json:", "\"address\" : \"203.0.113.5\"",
            "would make the API's TLS certificate: openssl req -x509",
            "would write /etc/default/nvmf4j:", "-XX:+UseZGC",
            "would write /etc/systemd/system/nvmf4j.service:", "ExecStart=/usr/bin/nvmf4j-target",
            "would write /etc/systemd/system/nvmf4j.service.d/profile.conf:", "CPUAffinity=2-15",
            "LimitMEMLOCK=infinity", "After=rdma-hw.target dev-hugepages.mount", "Requires=dev-hugepages.mount",
            "warning: rdma devices: no RDMA device", "dry run: nothing written");
        try (Stream<Path> s = Files.walk(root)) {
            assertThat(s.count()).isEqualTo(before);
        }
        assertThat(Files.readString(at("/proc/sys/vm/nr_hugepages"))).isEqualTo("0\n");
    }

    @Test
    void installsUnitConfigJvmOptionsCertificateAndReservesHugepages() throws Exception {
        machine();
        TargetRun r = setup("--profile", "bluefield2", "--uplink", "192.0.2.10", "--mgmt-address", "127.0.0.1",
            "--root", root.toString());
        assertThat(r.exit()).as(r.out() + r.err()).isZero();
        Profile p = Profile.load("bluefield2");
        long pages = Sizing.asShipped(p, p.preset()).hugepages;
        assertThat(Files.readString(at("/proc/sys/vm/nr_hugepages")).strip()).isEqualTo(String.valueOf(pages));
        assertThat(at(ProfileSetup.SYSCTL)).content().contains("vm.nr_hugepages = " + pages);
        TargetConfig c = ConfigStore.load(at(ProfileSetup.STATE_CONFIG));
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        assertThat(c.pollGroupCores).isEqualTo("[2-7]");
        assertThat(c.subsystems.get(0).listeners).extracting(l -> l.transport + ":" + l.address + ":" + l.port)
            .containsExactly("rdma:192.0.2.10:4420");
        assertThat(Files.getPosixFilePermissions(at(ProfileSetup.STATE_CONFIG)))
            .isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(at(ProfileSetup.DROP_IN)).content().contains("CPUAffinity=2-7", "LimitMEMLOCK=infinity",
            "Restart=on-failure", "Wants=rdma-hw.target");
        assertThat(at(ProfileSetup.DEFAULTS)).content().startsWith("# written by nvmf4j-target setup")
            .contains("NVMF4J_JAVA_OPTS=\"-XX:InitialRAMPercentage=12.5");
        assertThat(at("/etc/systemd/system/nvmf4j.service")).content().contains("[Service]");
        // the certificate openssl made is one Java reads, for the management address
        assertThat(at(c.api.tlsCert)).exists();
        // the service's group reads the key where the package made it; this root's /etc/group has none, so root
        // alone does
        assertThat(Files.getPosixFilePermissions(at(c.api.tlsKey))).isEqualTo(PosixFilePermissions.fromString(
            "rw-------"));
        try (var in = Files.newInputStream(at(c.api.tlsCert))) {
            var cert = (java.security.cert.X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
                .generateCertificate(in);
            assertThat(cert.getSubjectX500Principal().getName()).isEqualTo("CN=127.0.0.1");
        }
        assertThat(r.out()).contains("done; start with: systemctl daemon-reload && systemctl enable --now nvmf4j");

        // a second run keeps the state (identities) and the certificate
        String state = Files.readString(at(ProfileSetup.STATE_CONFIG));
        String cert = Files.readString(at(c.api.tlsCert));
        TargetRun again = setup("--profile", "bluefield2", "--uplink", "192.0.2.11", "--root", root.toString());
        assertThat(again.exit()).isZero();
        assertThat(again.out()).contains("kept /var/lib/nvmf4j/config.json", "hugepages: " + pages + " x 2 MiB reserved");
        assertThat(Files.readString(at(ProfileSetup.STATE_CONFIG))).isEqualTo(state);
        assertThat(Files.readString(at(c.api.tlsCert))).isEqualTo(cert);
        assertThat(at("/etc/nvmf4j/bluefield2.json")).content().contains("192.0.2.11");
    }

    @Test
    void scaleDownFitsTheUnitAndConfigToTheMachine() throws Exception {
        FakeMachine.arm(root, 4, "0x000", 4, 3, 0).file("/proc/sys/vm/nr_hugepages", "0\n");
        TargetRun r = setup("--profile", "bluefield3", "--uplink", "10.0.0.1", "--scale-down", "--root", root.toString());
        assertThat(r.exit()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("2 poll group(s) on CPUs 2-3", "(scaled down)");
        assertThat(at(ProfileSetup.DROP_IN)).content().contains("--scale-down", "CPUAffinity=2-3");
        TargetConfig c = ConfigStore.load(at(ProfileSetup.STATE_CONFIG));
        assertThat(c.cores).isEqualTo(2);
        assertThat(c.rdma.dataBuffers).isLessThan(Profile.load("bluefield3").preset().rdma.dataBuffers);
    }

    @Test
    void whereTheSpdkEngineRunsSetupInstallsItWithItsHugepagesAndTheirHugetlbfsForTheService() throws Exception {
        machine();
        TargetRun r = TargetRun.of(FakeProbe.SPDK_LOADS, "setup", "--profile", "bluefield3", "--uplink", "192.0.2.10",
            "--root", root.toString());
        assertThat(r.exit()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("engine: spdk (the profile's default: libnvmf4j_spdk for aarch64 (SPDK v26.05) "
            + "present and loads");
        TargetConfig c = ConfigStore.load(at(ProfileSetup.STATE_CONFIG));
        assertThat(c.engine).isEqualTo(Engines.SPDK);
        assertThat(c.spdk.coreMask).isEqualTo("[2-15]");
        assertThat(c.spdk.hugepages).isTrue();
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        assertThat(ConfigStore.load(at("/etc/nvmf4j/bluefield3.json")).engine).isEqualTo(Engines.SPDK);
        long pages = c.spdk.memSizeMb / 2 + Profile.SPDK_SPARE_HUGEPAGES;
        assertThat(Files.readString(at("/proc/sys/vm/nr_hugepages")).strip()).isEqualTo(String.valueOf(pages));
        assertThat(at(ProfileSetup.SYSCTL)).content().contains("vm.nr_hugepages = " + pages);
        assertThat(at(ProfileSetup.DROP_IN)).content()
            .contains("ExecStartPre=+/bin/chown nvmf4j:nvmf4j /dev/hugepages", "Requires=dev-hugepages.mount",
                "LimitMEMLOCK=infinity")
            .doesNotContain("CPUAffinity=");
    }

    @Test
    void whereItCannotSetupInstallsTheJavaEngineAsBefore() throws Exception {
        machine();
        TargetRun r = TargetRun.of(FakeProbe.SPDK_ABSENT, "setup", "--profile", "bluefield3", "--uplink", "192.0.2.10",
            "--root", root.toString());
        assertThat(r.exit()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("engine: java (engine spdk cannot run here: libnvmf4j_spdk has no aarch64 build");
        TargetConfig c = ConfigStore.load(at(ProfileSetup.STATE_CONFIG));
        assertThat(c.engine).isEqualTo(Engines.JAVA);
        long pages = Sizing.asShipped(Profile.load("bluefield3"), Profile.load("bluefield3").preset()).hugepages;
        assertThat(Files.readString(at("/proc/sys/vm/nr_hugepages")).strip()).isEqualTo(String.valueOf(pages));
        assertThat(at(ProfileSetup.DROP_IN)).content().contains("CPUAffinity=2-15").doesNotContain("ExecStartPre");
    }

    @Test
    void theEngineOfAKeptConfigurationWinsAndItsHugepagesAreReserved() throws Exception {
        machine();
        Path state = at(ProfileSetup.STATE_CONFIG);
        Files.createDirectories(state.getParent());
        String kept = "{\"engine\": \"java\", \"cores\": 2}\n";
        Files.writeString(state, kept);
        TargetRun r = TargetRun.of(FakeProbe.SPDK_LOADS, "setup", "--profile", "bluefield2", "--uplink", "192.0.2.10",
            "--root", root.toString());
        assertThat(r.exit()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("engine: java (named in /var/lib/nvmf4j/config.json, which wins over the "
            + "profile's default (here: spdk))", "kept /var/lib/nvmf4j/config.json");
        assertThat(Files.readString(state)).isEqualTo(kept);
        assertThat(ConfigStore.load(at("/etc/nvmf4j/bluefield2.json")).engine).isEqualTo(Engines.JAVA);
        Profile p = Profile.load("bluefield2");
        long pages = Sizing.asShipped(p, p.preset()).hugepages;
        assertThat(Files.readString(at("/proc/sys/vm/nr_hugepages")).strip()).isEqualTo(String.valueOf(pages));
        assertThat(at(ProfileSetup.DROP_IN)).content().contains("CPUAffinity=2-7");

        // one it names that cannot run here: setup warns, the file stays the operator's
        Files.writeString(state, "{\"engine\": \"spdk\"}\n");
        TargetRun spdk = TargetRun.of(FakeProbe.SPDK_ABSENT, "setup", "--profile", "bluefield2", "--uplink",
            "192.0.2.10", "--root", root.toString());
        assertThat(spdk.exit()).isZero();
        assertThat(spdk.out()).contains("warning: the configured engine cannot run here: name an engine that runs "
            + "here in /var/lib/nvmf4j/config.json: \"engine\": \"java\"");
    }

    @Test
    void badParametersAreRefusedNamingTheField() {
        machine();
        TargetRun r = setup("--profile", "bluefield3", "--uplink", "not-an-address", "--root", root.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("subsystems[0].listeners[0].address");
        assertThat(at(ProfileSetup.STATE_CONFIG)).doesNotExist();
        TargetRun missing = setup("--profile", "bluefield3", "--root", root.toString());
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).contains("--uplink");
        TargetRun unknown = setup("--profile", "bluefield9", "--uplink", "10.0.0.1", "--root", root.toString());
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("no profile 'bluefield9'");
    }
}

package io.nvmf4j.service.profile;

import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.kernel.Sysctl;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code nvmf4j-target setup --profile NAME}: what a DPU needs before {@code systemctl enable --now nvmf4j}, as a
 * list of steps carried out under a root ({@code /}, or a directory for a test or an image) or, dry, only printed:
 * the hugepage reservation (now and in /etc/sysctl.d), the configuration (kept where one exists: it holds the
 * target's identities), the API's TLS certificate, the JVM options (/etc/default/nvmf4j) and the unit's drop-in
 * with the profile's CPUs (or the spdk engine's access to the hugetlbfs) and ordering.
 */
public final class ProfileSetup {
    public static final String STATE_CONFIG = "/var/lib/nvmf4j/config.json";
    public static final String DROP_IN = "/etc/systemd/system/nvmf4j.service.d/profile.conf";
    public static final String DEFAULTS = "/etc/default/nvmf4j";
    public static final String SYSCTL = "/etc/sysctl.d/60-nvmf4j-hugepages.conf";
    public static final String UNIT = "/lib/systemd/system/nvmf4j.service";
    /** The unit's {@code User=} and {@code Group=} (the package makes them). */
    static final String SERVICE_USER = "nvmf4j";

    private final Profile profile;
    private final Sizing sizing;
    private final Path root;
    private final boolean dryRun;
    private final PrintWriter out;
    private final String serviceGroup;

    public ProfileSetup(Profile profile, Sizing sizing, Path root, boolean dryRun, PrintWriter out) {
        this(profile, sizing, root, dryRun, out, SERVICE_USER);
    }

    /** {@code serviceGroup}: the group the service runs as, which must read the API's TLS key (tests: another). */
    ProfileSetup(Profile profile, Sizing sizing, Path root, boolean dryRun, PrintWriter out, String serviceGroup) {
        this.profile = profile;
        this.sizing = sizing;
        this.root = root;
        this.dryRun = dryRun;
        this.out = out;
        this.serviceGroup = serviceGroup;
    }

    private Path at(String path) {
        return root.resolve(path.substring(1));
    }

    /** Carries out (or prints) every step; an IOException names the file it could not write. */
    public void run() throws IOException {
        hugepages();
        writeFile(SYSCTL, "# nvmf4j profile " + profile.machine.name + ": 2 MiB pages for the RDMA buffers\n"
            + "vm.nr_hugepages = " + sizing.hugepages + "\n", "rw-r--r--");
        config();
        tls();
        writeFile(DEFAULTS, defaults(), "rw-r--r--");
        if (!Files.exists(at(UNIT)) && !Files.exists(at("/etc/systemd/system/nvmf4j.service"))) {
            writeFile("/etc/systemd/system/nvmf4j.service", baseUnit(), "rw-r--r--");
        }
        writeFile(DROP_IN, dropIn(), "rw-r--r--");
        out.println(dryRun ? "dry run: nothing written" : "done; start with: systemctl daemon-reload && "
            + "systemctl enable --now nvmf4j");
    }

    private void hugepages() throws IOException {
        Path nr = at("/proc/sys/vm/nr_hugepages");
        long now = Files.exists(nr) ? Sysctl.readLong(nr) : -1;
        if (now >= sizing.hugepages) {
            out.println("hugepages: " + now + " x 2 MiB reserved, " + sizing.hugepages + " needed");
            return;
        }
        out.println((dryRun ? "would reserve" : "reserving") + " hugepages: echo " + sizing.hugepages
            + " > /proc/sys/vm/nr_hugepages (now " + Math.max(now, 0) + ")");
        if (!dryRun) {
            Files.writeString(nr, sizing.hugepages + "\n");
            long got = Sysctl.readLong(nr);
            if (got < sizing.hugepages) {
                out.println("warning: the kernel reserved " + got + " of " + sizing.hugepages + " pages (memory too "
                    + "fragmented: reboot with the sysctl.d file in place, or hugepages=" + sizing.hugepages
                    + " on the kernel command line)");
            }
        }
    }

    private void config() throws IOException {
        String json = ConfigStore.toJson(sizing.config);
        writeFile("/etc/nvmf4j/" + profile.machine.name + ".json", json, "rw-------");
        if (Files.exists(at(STATE_CONFIG))) {
            out.println("kept " + STATE_CONFIG + " (it holds the target's identities); the profile's configuration "
                + "is in /etc/nvmf4j/" + profile.machine.name + ".json");
        } else {
            if (!dryRun) {
                Files.createDirectories(at("/var/lib/nvmf4j"),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            writeFile(STATE_CONFIG, json, "rw-------");
        }
    }

    private void tls() throws IOException {
        TargetConfig c = sizing.config;
        if (c.api.tlsCert == null || Files.exists(at(c.api.tlsCert)) && Files.exists(at(c.api.tlsKey))) {
            return;
        }
        List<String> cmd = certificateCommand(at(c.api.tlsCert), at(c.api.tlsKey), c.api.address);
        if (dryRun) {
            out.println("would make the API's TLS certificate: " + String.join(" ", cmd));
            return;
        }
        Files.createDirectories(at(c.api.tlsKey).getParent());
        makeCertificate(cmd);
        Path key = at(c.api.tlsKey);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        out.println("made a self-signed TLS certificate for " + c.api.address + ": " + c.api.tlsCert
            + " (replace it with one your CA signed, same paths)");
        keyToServiceGroup(key, c.api.tlsKey);
    }

    /**
     * The key readable by the service's group and nobody else (root:nvmf4j, 0640): the unit runs as nvmf4j, and a
     * key only root reads stops its start ({@code api.tlsKey: cannot read ... (permission denied)}). Where there is
     * no such group (the tarball without its user made), the key stays root's alone, with a line saying what to do.
     */
    private void keyToServiceGroup(Path key, String shown) throws IOException {
        Integer gid = null;
        GroupPrincipal group = null;
        if (root.toAbsolutePath().normalize().getParent() != null) {
            // another root (an image): its own /etc/group says the group's id, which this machine may not share
            gid = gidIn(at("/etc/group"), serviceGroup);
        } else {
            try {
                group = key.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByGroupName(serviceGroup);
            } catch (UserPrincipalNotFoundException e) {
                // below
            }
        }
        if (gid == null && group == null) {
            out.println("warning: no group " + serviceGroup + " on this machine: " + shown + " stays readable by "
                + "root only; the service's user must read it (chgrp <its group> " + shown + " && chmod 0640 "
                + shown + ")");
            return;
        }
        if (group != null) {
            Files.getFileAttributeView(key, PosixFileAttributeView.class).setGroup(group);
        } else {
            Files.setAttribute(key, "unix:gid", gid);
        }
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r-----"));
        out.println("the key " + shown + " is readable by group " + serviceGroup + " (the service's) and root");
    }

    /** The id of group {@code name} in a group file ({@code name:x:gid:members}), or null when it has none. */
    static Integer gidIn(Path groupFile, String name) throws IOException {
        if (!Files.isReadable(groupFile)) {
            return null;
        }
        for (String line : Files.readAllLines(groupFile, StandardCharsets.UTF_8)) {
            String[] f = line.split(":", -1);
            if (f.length >= 3 && f[0].equals(name) && f[2].matches("[0-9]{1,9}")) {
                return Integer.valueOf(f[2]);
            }
        }
        return null;
    }

    /** openssl's self-signed P-256 certificate for {@code address} (an IP literal or a host name). */
    public static List<String> certificateCommand(Path cert, Path key, String address) {
        boolean ip = address.matches("[0-9.]+") || address.contains(":");
        return List.of("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", key.toString(), "-out", cert.toString(), "-days", "825", "-subj", "/CN=" + address,
            "-addext", "subjectAltName=" + (ip ? "IP:" : "DNS:") + address);
    }

    /** Runs {@link #certificateCommand}; an IOException with openssl's output when it fails. */
    public static void makeCertificate(List<String> cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("openssl failed: " + log.strip());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted making the certificate", e);
        }
    }

    /** /etc/default/nvmf4j: the profile's JVM options for the launcher. */
    String defaults() {
        return "# written by nvmf4j-target setup --profile " + profile.machine.name + " (the profile's jvm.options)\n"
            + "NVMF4J_JAVA_OPTS=\"" + String.join(" ", profile.jvmOptions) + "\"\n";
    }

    /**
     * The unit's drop-in: the CPUs (the java engine's poll groups'; the spdk engine pins its reactors itself) or the
     * spdk engine's access to the hugetlbfs, memory limits and ordering after hugetlbfs and the RDMA devices.
     */
    public String dropIn() {
        List<String> l = new ArrayList<>();
        l.add("# written by nvmf4j-target setup --profile " + profile.machine.name
            + (sizing.scaledDown ? " --scale-down" : "") + " (" + profile.machine.model + ")");
        l.add("[Unit]");
        l.add("# rdma-core's udev rules start rdma-hw.target once an RDMA device (the card's ports) is there");
        l.add("Wants=rdma-hw.target");
        l.add("Requires=dev-hugepages.mount");
        l.add("After=rdma-hw.target dev-hugepages.mount");
        l.add("");
        l.add("[Service]");
        String cpus = Profile.cpuList(sizing.config);
        if (!EngineCapabilities.forDocument(sizing.config).has(EngineCapabilities.Feature.POLL_GROUP_PLACEMENT)) {
            l.add("# the spdk engine pins SPDK's reactors to spdk.coreMask and moves the JVM's own threads off them "
                + "(isolateCores): no CPUAffinity");
            if (sizing.config.spdk.hugepages) {
                l.add("# DPDK makes the files of SPDK's memory in the hugetlbfs: the service's user must write it");
                l.add("ExecStartPre=+/bin/chown " + SERVICE_USER + ":" + SERVICE_USER + " /dev/hugepages");
            }
        } else if (!cpus.isEmpty()) {
            l.add("# the poll groups' CPUs (pollGroupCores); the OS keeps the others");
            l.add("CPUAffinity=" + cpus);
        }
        l.add("LimitMEMLOCK=infinity");
        l.add("Restart=on-failure");
        l.add("RestartSec=3s");
        return String.join("\n", l) + "\n";
    }

    private static String baseUnit() throws IOException {
        try (InputStream in = ProfileSetup.class.getResourceAsStream("/io/nvmf4j/profiles/systemd/nvmf4j.service")) {
            if (in == null) {
                throw new IOException("the unit is missing from the build");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private void writeFile(String path, String content, String mode) throws IOException {
        if (dryRun) {
            out.println("would write " + path + ":");
            content.lines().forEach(x -> out.println("    " + x));
            return;
        }
        Path f = at(path);
        Files.createDirectories(f.getParent());
        Path tmp = f.resolveSibling(f.getFileName() + ".tmp");
        Files.writeString(tmp, content);
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString(mode));
        Files.move(tmp, f, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
            java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        out.println("wrote " + path);
    }
}

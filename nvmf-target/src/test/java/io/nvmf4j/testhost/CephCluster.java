package io.nvmf4j.testhost;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real one-node Ceph cluster (one monitor, one BlueStore OSD on a sparse file, cephx, pool {@code rbd},
 * client {@code client.nvmf4j}) for the tests that use it: {@code @ExtendWith(CephCluster.class)}, then
 * {@link #get()}. The cluster is started once per test run (per module, per Surefire JVM) by the repository's
 * {@code e2e/ceph/cluster.sh start} in a fresh temporary directory, shared by every test class, and stopped
 * (its daemons by pid, its directory removed) when the run ends.
 *
 * <p>Without Ceph's programs the tests fail, naming the install command: nothing the issues name may be
 * skipped on this project's machines.
 */
public final class CephCluster implements BeforeAllCallback, AutoCloseable {
    private static final Object LOCK = new Object();
    private static CephCluster started;

    private final Path script;
    private final Path dir;
    private final Map<String, String> env;

    /** Used by JUnit as the extension; the cluster itself is made in {@link #beforeAll}. */
    public CephCluster() {
        this.script = null;
        this.dir = null;
        this.env = Map.of();
    }

    private CephCluster(Path script, Path dir, Map<String, String> env) {
        this.script = script;
        this.dir = dir;
        this.env = env;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        synchronized (LOCK) {
            if (started == null) {
                CephCluster c = start();
                context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL).put(CephCluster.class.getName(), c);
                started = c;
            }
        }
    }

    /** The running cluster (after the extension's {@code beforeAll}). */
    public static CephCluster get() {
        synchronized (LOCK) {
            if (started == null) {
                throw new IllegalStateException("CephCluster is not started: annotate the test class with"
                    + " @ExtendWith(CephCluster.class)");
            }
            return started;
        }
    }

    /** The config file with the monitor's address. */
    public String conf() {
        return env.get("CEPH_CONF");
    }

    /** The keyring of {@link #client()}. */
    public String keyring() {
        return env.get("CEPH_KEYRING");
    }

    public String client() {
        return env.get("CEPH_CLIENT");
    }

    public String pool() {
        return env.get("CEPH_POOL");
    }

    /** The admin's keyring (for the {@code rbd} and {@code ceph} commands in tests). */
    public String adminKeyring() {
        return env.get("CEPH_ADMIN_KEYRING");
    }

    /** The cluster's directory (its config, keyrings, logs). */
    public Path dir() {
        return dir;
    }

    /** Runs {@code rbd ARGS...} as the admin on this cluster and returns its standard output. */
    public String rbd(String... args) throws IOException, InterruptedException {
        return run(adminCommand("rbd", args).toArray(String[]::new), 120);
    }

    /** Runs {@code rados ARGS...} as the admin on this cluster and returns its standard output. */
    public String rados(String... args) throws IOException, InterruptedException {
        return run(adminCommand("rados", args).toArray(String[]::new), 120);
    }

    /** Runs {@code ceph ARGS...} as the admin on this cluster and returns its standard output. */
    public String ceph(String... args) throws IOException, InterruptedException {
        return run(adminCommand("ceph", args).toArray(String[]::new), 120);
    }

    /** {@code tool ARGS...} with this cluster's config and the admin's name and keyring (rbd, rados, ceph). */
    public java.util.List<String> adminCommand(String tool, String... args) {
        java.util.List<String> cmd = new java.util.ArrayList<>();
        cmd.add(tool);
        cmd.addAll(java.util.List.of(args));
        cmd.addAll(java.util.List.of("-c", conf(), "-n", "client.admin", "-k", adminKeyring()));
        return cmd;
    }

    /**
     * Starts a manager ({@code ceph-mgr}, once) for the tests that read the pools' figures: the monitors' {@code df}
     * comes from the manager's statistics, which the one-monitor, one-OSD cluster has none of without it. Its pid
     * file lies with the cluster's daemons, so the cluster's stop stops it too.
     */
    public void ensureManager() throws IOException, InterruptedException {
        synchronized (LOCK) {
            Path data = dir.resolve("mgr.x");
            if (Files.isDirectory(data)) {
                return;
            }
            Files.createDirectories(data);
            ceph("auth", "get-or-create", "mgr.x", "mon", "allow profile mgr", "osd", "allow *", "-o",
                data.resolve("keyring").toString());
            run(new String[] {"ceph-mgr", "-c", conf(), "-i", "x", "--keyring", data.resolve("keyring").toString(),
                "--mgr-data", data.toString()}, 60);
        }
    }

    /** A RADOS pool of its own for a test, with a client allowed on it alone ({@code profile rbd}). */
    public record RadosPool(String name, String client, String keyring) {
    }

    /**
     * Makes RADOS pool {@code <prefix><random>} (application rbd) and client {@code client.<pool>} with its keyring in
     * the cluster's directory; {@link #deletePool} removes the pool again.
     */
    public RadosPool newPool(String prefix) throws IOException, InterruptedException {
        String name = prefix + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong() & 0xffffffffL);
        String client = "client." + name;
        String keyring = dir.resolve(client + ".keyring").toString();
        ceph("osd", "pool", "create", name, "8", "8");
        ceph("osd", "pool", "application", "enable", name, "rbd");
        ceph("auth", "get-or-create", client, "mon", "profile rbd", "osd", "profile rbd pool=" + name, "-o", keyring);
        return new RadosPool(name, client, keyring);
    }

    public void deletePool(RadosPool p) throws IOException, InterruptedException {
        ceph("osd", "pool", "delete", p.name(), p.name(), "--yes-i-really-really-mean-it");
    }

    /** What {@link #stopOsd} returns: closing it lets the OSD run again. */
    public interface StoppedOsd extends AutoCloseable {
        @Override
        void close() throws IOException, InterruptedException;
    }

    /**
     * Stops the cluster's OSD (SIGSTOP): it keeps its connections and the monitors keep it up, but it answers
     * nothing, so a client's op times out (rados_osd_op_timeout); what it had received it may still apply once the
     * returned handle is closed (SIGCONT).
     */
    public StoppedOsd stopOsd() throws IOException, InterruptedException {
        String pid = Files.readString(dir.resolve("run/osd.0.pid"), StandardCharsets.US_ASCII).trim();
        run(new String[] {"kill", "-STOP", pid}, 10);
        return () -> run(new String[] {"kill", "-CONT", pid}, 10);
    }

    private static CephCluster start() throws IOException, InterruptedException {
        Path script = findScript();
        Path dir = Files.createTempDirectory("nvmf4j-ceph-");
        long t0 = System.nanoTime();
        String out;
        try {
            out = run(new String[] {script.toString(), "start", dir.toString()}, 180);
        } catch (IOException e) {
            run(new String[] {script.toString(), "stop", dir.toString()}, 60);
            throw new IllegalStateException("the test Ceph cluster did not start (" + script + " start): "
                + e.getMessage() + "\nCeph's programs come from Debian's packages: apt-get install -y ceph", e);
        }
        Map<String, String> env = new HashMap<>();
        for (String line : out.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0 && line.startsWith("CEPH_")) {
                env.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        System.out.printf("CephCluster: started in %.1f s in %s (monitor %s)%n", (System.nanoTime() - t0) / 1e9,
            dir, env.get("CEPH_MON"));
        return new CephCluster(script, dir, env);
    }

    /** Stops the cluster at the end of the run (JUnit closes the root store's AutoCloseable values). */
    @Override
    public void close() throws IOException, InterruptedException {
        synchronized (LOCK) {
            started = null;
        }
        run(new String[] {script.toString(), "stop", dir.toString()}, 60);
    }

    /** e2e/ceph/cluster.sh of this repository, found upwards from the module's directory. */
    private static Path findScript() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path s = p.resolve("e2e/ceph/cluster.sh");
            if (Files.isExecutable(s)) {
                return s;
            }
        }
        throw new IllegalStateException("e2e/ceph/cluster.sh not found above " + Path.of("").toAbsolutePath());
    }

    /** Runs {@code cmd}; its standard output, or IOException with its exit code and standard error. */
    private static String run(String[] cmd, int timeoutSeconds) throws IOException, InterruptedException {
        Path err = Files.createTempFile("nvmf4j-ceph-", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + ": no end after " + timeoutSeconds + " s");
            }
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", cmd) + ": exit " + p.exitValue() + ": "
                    + Files.readString(err, StandardCharsets.UTF_8).strip());
            }
            return new String(out, StandardCharsets.UTF_8);
        } finally {
            Files.deleteIfExists(err);
        }
    }
}

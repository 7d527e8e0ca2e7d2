package io.nvmf4j.spdk;

import io.nvmf4j.rdma.NativeLibraryLoader;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The JNI binding of libnvmf4j_spdk ({@code src/main/c/nvmf4j_spdk.c}). Every call but {@link #abiVersion},
 * {@link #version} and {@link #running} runs on SPDK's app thread and throws {@link SpdkException} when SPDK
 * refuses it. SPDK starts once per process ({@link #start}); DPDK cannot initialise again after
 * {@link #stop}.
 */
final class SpdkNative {
    /** Must equal {@code NVMF4J_SPDK_ABI_VERSION} in {@code nvmf4j_spdk.c}; JNI_OnLoad checks it. */
    static final int ABI_VERSION = 9;
    static final String NAME = "nvmf4j_spdk";
    /** Written by build-native.sh instead of the library when no SPDK was found to build against. */
    static final String UNAVAILABLE_RESOURCE = "META-INF/native/" + NAME + ".unavailable";

    private static final String UNAVAILABILITY = loadLibrary();

    private SpdkNative() {
    }

    /** Null when the library loaded, else why not (one line). */
    static String unavailabilityCause() {
        return UNAVAILABILITY;
    }

    static boolean isAvailable() {
        return UNAVAILABILITY == null;
    }

    /**
     * Written by build-native.sh when this architecture's library is never built here: an x86-64 build does
     * not cross-build SPDK, so the aarch64 package says so instead of a bare "not found".
     */
    static String archUnavailableResource() {
        return "META-INF/native/" + NAME + "_" + NativeLibraryLoader.arch() + ".unavailable";
    }

    /** The resource that says why this build has no library for this machine, or null. */
    static String unavailableResource() {
        ClassLoader loader = SpdkNative.class.getClassLoader();
        for (String resource : new String[] {archUnavailableResource(), UNAVAILABLE_RESOURCE}) {
            if (loader.getResource(resource) != null) {
                return resource;
            }
        }
        return null;
    }

    private static String loadLibrary() {
        String resource = unavailableResource();
        if (resource != null) {
            try (InputStream in = SpdkNative.class.getClassLoader().getResourceAsStream(resource)) {
                String why = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
                return resource.equals(UNAVAILABLE_RESOURCE) ? "libnvmf4j_spdk was built without SPDK: " + why
                    : "libnvmf4j_spdk has no " + NativeLibraryLoader.arch() + " build in this package: " + why;
            } catch (IOException e) {
                return "cannot read " + resource + ": " + e.getMessage();
            }
        }
        return NativeLibraryLoader.loadOrExplain(NAME, SpdkNative.class, SpdkNative::abiVersion, ABI_VERSION);
    }

    static native int abiVersion();

    /** SPDK's version string ({@code SPDK v26.05}). */
    static native String version();

    /**
     * Starts SPDK's environment and reactors on {@code coreMask}, with {@code memSizeMb} of memory (in ordinary
     * pages when {@code noHuge}); returns once the NVMe-oF target exists. {@code coreLocks}: claim the cores
     * with SPDK's lock files; {@code isolateCores}: move the JVM's own threads off the reactors' cores. Control calls that SPDK does not finish within {@code callTimeoutMs} fail with
     * ETIMEDOUT.
     */
    static native void start(String name, String coreMask, int memSizeMb, boolean noHuge, boolean coreLocks,
                             boolean isolateCores, int callTimeoutMs);

    /** Shuts SPDK down (subsystems, bdevs, environment) and waits for it; returns spdk_app_start's status. */
    static native int stop();

    static native boolean running();

    /**
     * Creates transport {@code type} ({@code TCP}, {@code RDMA}) unless it exists. {@code opts}: max queue
     * depth, max I/O queues, in-capsule data size, max I/O size, I/O unit size, shared buffers, buffer cache
     * size; a negative (or, where 0 is meaningless, 0) entry keeps SPDK's default.
     */
    static native void createTransport(String type, int[] opts);

    /**
     * {@code type}: malloc, null or file (SPDK's aio bdev on {@code /proc/self/fd/<fd>}, which reopens the file
     * {@code fd} names; blockSize 0: the file's). The call takes {@code fd} over (-1: none) and closes it once
     * SPDK is done with it, which may be after this call threw ETIMEDOUT: the descriptor number cannot name another
     * file before SPDK opened it.
     */
    static native void createBdev(String type, String name, long numBlocks, int blockSize, int fd, String uuid);

    static native void deleteBdev(String type, String name);

    /** null: resize to numBlocks (whole MiB); file: rescan the file's size. */
    static native void resizeBdev(String type, String name, long numBlocks);

    /**
     * Sets the QoS of bdev {@code name} through SPDK's bdev QoS ({@code spdk_bdev_set_qos_rate_limits}): read+write
     * IOPS (a multiple of 1000), read+write, read and write MB/s (2^20 bytes); 0 disables a limit, all 0 disables QoS.
     */
    static native void bdevQos(String name, long iops, long rwMBps, long readMBps, long writeMBps);

    static native void createSubsystem(String nqn, String serial, String model, int maxNamespaces, int minCntlid,
                                       int maxCntlid, boolean allowAnyHost);

    static native void deleteSubsystem(String nqn);

    static native void setAllowAnyHost(String nqn, boolean allow);

    /**
     * Allows a host; {@code dhchapKey}, {@code ctrlKey}: names of keys ({@link #addKey}) it and the controller
     * authenticate with (DH-HMAC-CHAP), {@code psk}: the key its TLS connections use (SPDK's TCP transport reads it
     * now); each null for none.
     */
    static native void addHost(String nqn, String hostnqn, String dhchapKey, String ctrlKey, String psk);

    /**
     * Adds key {@code name} to SPDK's keyring, backed by key file {@code path} (checked now: no symbolic link, a
     * regular file of this user or root, mode 0600 or 0400) and read again whenever SPDK uses the key.
     */
    static native void addKey(String name, String path);

    /** Removes key {@code name} from SPDK's keyring (hosts added with it keep their reference until removed). */
    static native void removeKey(String name);

    /**
     * Makes SPDK's TCP transport read host {@code hostnqn}'s PSK (key {@code psk}) on subsystem {@code nqn} again
     * (it reads it only when the host is added); TLS connections already up are not touched.
     */
    static native void reloadPsk(String nqn, String hostnqn, String psk);

    /** Removes a host from the allow-list (its controllers stay: {@link #disconnectHost} ends them). */
    static native void removeHost(String nqn, String hostnqn);

    static native void disconnectHost(String nqn, String hostnqn);

    /**
     * Pauses the subsystem, adds the namespace in ANA group {@code anaGroup} (1..maxNamespaces), resumes (hosts get
     * the changed-namespace AEN); the nsid. With {@code ptplFile} (an absolute path, null: none) SPDK keeps the
     * namespace's reservation there while a host has Persist Through Power Loss on, and restores it from there now.
     */
    static native int addNamespace(String nqn, int nsid, String bdev, byte[] nguid, byte[] uuid, byte[] eui64,
                                   boolean masked, int anaGroup, String ptplFile);

    /**
     * Makes masked namespace {@code nsid} visible ({@code visible}) or not to {@code hostnqn}
     * ({@code spdk_nvmf_ns_add_host} / {@code spdk_nvmf_ns_remove_host}, subsystem paused); SPDK sends that host's
     * controllers the changed-namespace AEN.
     */
    static native void namespaceHost(String nqn, int nsid, String hostnqn, boolean visible);

    static native void removeNamespace(String nqn, int nsid);

    /**
     * Moves namespace {@code nsid} to ANA group {@code group} ({@code spdk_nvmf_subsystem_set_ns_ana_group},
     * subsystem paused); at the resume SPDK sends the controllers the ANA change AEN.
     */
    static native void namespaceAnaGroup(String nqn, int nsid, int group);

    /**
     * The target listens on an address ({@code trtype}: TCP or RDMA); {@code secure}: TLS only (SPDK's ssl socket,
     * the PSKs of the hosts added with one).
     */
    static native void listen(String trtype, String traddr, String trsvcid, boolean secure);

    static native void stopListen(String trtype, String traddr, String trsvcid);

    /** Adds a listener to a subsystem ({@code secure} as the address was bound with, see {@link #listen}). */
    static native void addListener(String nqn, String trtype, String traddr, String trsvcid, boolean secure);

    /** Removes a listener from a subsystem and disconnects the hosts connected through it. */
    static native void removeListener(String nqn, String trtype, String traddr, String trsvcid);

    /**
     * Sets ANA group {@code group}'s state through a listener of subsystem {@code nqn} to {@code anas} (the ANA log's
     * state value: 1 optimized, 2 non-optimized, 3 inaccessible; SPDK has no other) with the subsystem paused; SPDK
     * sends the hosts connected through that listener the ANA change event when it changed.
     */
    static native void setAnaState(String nqn, String trtype, String traddr, String trsvcid, int group, int anas);

    static native void referral(boolean add, String trtype, String traddr, String trsvcid);

    /**
     * Lines of cntlid, hostnqn, hostid (hex), admin-queue host address, kato ms, the I/O queues' qids
     * (comma-separated, empty when none); tab-separated.
     */
    static native String controllers(String nqn);

    /**
     * Lines of bdev name, read ops, bytes read, write ops, bytes written, unmap ops, bytes unmapped, read latency
     * ticks, write latency ticks, tick rate; a bdev's aliases (an lvol's {@code <store>/<lvol>}) get a line each too.
     */
    static native String bdevStats();

    /** One line: busy ticks, idle ticks (summed over SPDK's threads), tick rate. */
    static native String threadStats();

    /**
     * One line: poll groups, admin queues (cumulative), I/O queues (cumulative), admin queues now, I/O queues
     * now, pending bdev I/O, completed NVMe I/O.
     */
    static native String pollGroupStats();

    /**
     * SPDK's latency histograms: a line per bdev that has one (every namespace's bdev: enabled when the namespace
     * is added) and per alias of it, or only bdev {@code bdev}'s ({@code null}: every one; an empty answer when it has none): its name,
     * then for each non-empty bucket "start,end,count" (nanoseconds); tab-separated. ENODEV for an unknown bdev.
     */
    static native String bdevLatency(String bdev);

    /** {@link #lvs} operations. */
    static final int LVS_OPEN = 0, LVS_REMOVE = 1, LVS_INFO = 2;

    /**
     * An lvol store: {@link #LVS_OPEN} waits for SPDK's examine of every bdev, then takes the store {@code name}
     * found on bdev {@code base} (returns {@code loaded}) or makes it there with clusters of {@code clusterBytes}
     * (returns {@code created}); {@link #LVS_REMOVE} destroys the store (its lvols gone); {@link #LVS_INFO} returns
     * "cluster-bytes total-clusters free-clusters block-bytes" and one line per lvol
     * "name TAB allocated-clusters TAB clusters TAB thin(0|1) TAB snapshot(0|1) TAB data-end TAB parent" (data-end: one
     * past the lvol's last cluster of its own, 0 when it has none; parent: the lvol it depends on, the snapshot it was
     * cloned or snapshotted from, empty when none).
     */
    static native String lvs(int op, String base, String name, long clusterBytes);

    /** {@link #lvol} operations. */
    static final int LVOL_CREATE = 0, LVOL_RESIZE = 1, LVOL_DESTROY = 2, LVOL_SNAPSHOT = 3, LVOL_CLONE = 4;

    /**
     * Lvol {@code lvol} of store {@code lvs}: create (named {@code lvol}, {@code bytes}, {@code thin}), resize to
     * {@code bytes} (live: SPDK tells the namespaces on it), destroy (EBUSY while lvols depend on it), snapshot
     * into {@code made}, or clone a snapshot into {@code made}.
     */
    static native void lvol(int op, String lvs, String lvol, String made, long bytes, boolean thin);

    /**
     * Pauses subsystem {@code nqn} ({@code pause}), its commands on namespace {@code nsid} completed first (0: none
     * awaited), or resumes it.
     */
    static native void pauseSubsystem(String nqn, int nsid, boolean pause);

    /**
     * Test hook: blocks SPDK's app thread, as a slow SPDK step would, until {@link #releaseAppThread}; returns once
     * it is blocked. Control calls made meanwhile wait, and time out after the start's {@code callTimeoutMs}.
     */
    static native void holdAppThread();

    /** Test hook: lets the app thread blocked by {@link #holdAppThread} go on. */
    static native void releaseAppThread();
}

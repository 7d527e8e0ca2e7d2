package io.nvmf4j.spdk;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.SnapshotConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.VolumeConfig;
import io.nvmf4j.engine.MissingVolumes;
import io.nvmf4j.engine.PoolInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The spdk engine's pools: SPDK lvol stores ({@link PoolConfig#KIND_LVOL}). A pool is the store named like it on its
 * base bdev; a volume is the store's lvol of its name (thin unless thick), a snapshot the read-only lvol
 * {@code <volume>@<snapshot>}, a clone an lvol cloned from one. SPDK names each lvol's bdev {@code <store>/<lvol>}
 * as an alias, so a namespace names a volume {@code <pool>/<volume>} as on the java engine. Called by
 * {@link SpdkEngine} holding its monitor.
 *
 * <p>A snapshot of volumes that namespaces use is crash-consistent: each subsystem exporting one is paused (SPDK
 * holds new commands and waits for those on the namespace), the snapshots are taken, the subsystems resume. The
 * pause is logged with its length.
 */
final class SpdkPools {
    private static final Logger LOG = LoggerFactory.getLogger(SpdkPools.class);
    /** SPDK's longest lvol name (SPDK_LVOL_NAME_MAX less its NUL). */
    static final int MAX_LVOL_NAME = 63;

    /**
     * What the start found in a pool's store against the document: lvols it lacks ({@code missing}); lvols the document
     * does not name, deleted as changes never committed ({@code removed}) or kept ({@code kept}: not of the pool's
     * naming, or SPDK would not delete them; see {@link UncommittedLvols}); and volumes it set to the document's size
     * ({@code resized}).
     */
    record Reconciled(boolean created, List<String> missing, List<String> removed, List<String> kept,
                      List<String> resized) {
    }

    /** A store's capacity and lvols ({@link SpdkNative#LVS_INFO}). */
    record StoreInfo(long clusterBytes, long totalClusters, long freeClusters, int blockBytes,
                     Map<String, Lvol> lvols) {
    }

    /**
     * An lvol; {@code dataEndClusters}: one past its last allocated cluster (0 when it has none of its own);
     * {@code parent}: the snapshot lvol it depends on, or null.
     */
    record Lvol(String name, long allocatedClusters, long clusters, boolean thin, boolean snapshot,
                long dataEndClusters, String parent) {
        Lvol withParent(String p) {
            return new Lvol(name, allocatedClusters, clusters, thin, snapshot, dataEndClusters, p);
        }
    }

    private final Map<String, Reconciled> reconciled = new HashMap<>();
    private final Map<String, Boolean> aboveWatermark = new HashMap<>();
    private final Map<String, Long> crossings = new HashMap<>();

    /**
     * At start: opens every pool's store (after SPDK examined the bdevs, so a store on a file bdev is loaded) and
     * compares its lvols with the document. A store made anew (a malloc base bdev loses it with the process) gets the
     * document's volumes, snapshots and clones again, empty. In a store found, an lvol the document does not name
     * is deleted when it is of the pool's naming (a change never committed) and kept otherwise
     * ({@link UncommittedLvols}); a document's lvol the store lacks goes to {@code missing} (the start goes on; its
     * namespace is not served), and a volume's lvol of another size than the document's is set to it
     * ({@link #setSize}). Each is logged and kept in {@link #reconciled}.
     */
    void open(TargetConfig c, MissingVolumes missing) {
        for (PoolConfig p : c.pools) {
            boolean created = "created".equals(openStore(p));
            Set<String> expected = expectedLvols(p);
            if (created && !expected.isEmpty()) {
                remake(p);
                LOG.warn("pool {}: its lvol store on bdev {} was made anew (a malloc bdev's data ends with the"
                    + " process): {} volume(s) and snapshot(s) of the configuration made again, empty", p.name,
                    p.baseBdev, expected.size());
            }
            UncommittedLvols.Outcome left = UncommittedLvols.reconcile(p, info(p.name), expected);
            StoreInfo store = info(p.name);
            Set<String> actual = store.lvols().keySet();
            List<String> lacks = expected.stream().filter(n -> !actual.contains(n)).toList();
            List<String> resized = new ArrayList<>();
            for (VolumeConfig v : p.volumes) {
                for (SnapshotConfig s : v.snapshots) {
                    if (lacks.contains(snapshotLvol(v.name, s.name))) {
                        missing.add(p.name, v.name, s.name, "the lvol store on bdev " + p.baseBdev + " has no lvol "
                            + snapshotLvol(v.name, s.name));
                    }
                }
                Lvol l = store.lvols().get(v.name);
                if (l == null) {
                    missing.add(p.name, v.name, null, "the lvol store on bdev " + p.baseBdev + " has no lvol "
                        + v.name);
                } else if (setSize(p, store, v, l)) {
                    resized.add(v.name);
                }
            }
            reconciled.put(p.name, new Reconciled(created, lacks, left.removed(), left.kept(), resized));
            if (!lacks.isEmpty()) {
                LOG.error("pool {}: the lvol store on bdev {} lacks {} of the configuration; the start goes on without"
                    + " them", p.name, p.baseBdev, lacks);
            }
            if (!left.kept().isEmpty()) {
                LOG.warn("pool {}: the lvol store on bdev {} holds {}, which the configuration does not name; kept",
                    p.name, p.baseBdev, left.kept());
            }
            LOG.info("pool {}: lvol store {} on bdev {}, {} volume(s), {} lvol(s) in the store", p.name,
                created ? "made" : "loaded", p.baseBdev, p.volumes.size(), actual.size());
        }
    }

    /**
     * Sets volume {@code v}'s lvol {@code l} to the document's size when it differs (a resize whose document was
     * written but whose lvol change did not happen, or one never committed); whether it did. A shrink of an lvol that
     * holds data of its own beyond the document's size says so in its log line.
     */
    private static boolean setSize(PoolConfig p, StoreInfo store, VolumeConfig v, Lvol l) {
        long want = bytes(v, v.numBlocks);
        long has = l.clusters() * store.clusterBytes();
        if (has == want) {
            return false;
        }
        long dataEnd = l.dataEndClusters() * store.clusterBytes();
        String beyond = has < want ? "" : dataEnd > want
            ? "; it holds data of its own up to byte " + dataEnd + ", which the shrink cuts away"
            : "; it holds no data of its own beyond that size";
        LOG.warn("pool {}: lvol {} holds {} bytes, the configuration says {} (a resize that did not complete): set to"
            + " {}{}", p.name, v.name, has, want, want, beyond);
        try {
            SpdkNative.lvol(SpdkNative.LVOL_RESIZE, p.name, v.name, null, want, true);
            return true;
        } catch (SpdkException e) {
            LOG.error("pool {}: lvol {} could not be set to {} bytes ({}); it serves its {} bytes", p.name, v.name,
                want, e.getMessage(), has);
            return false;
        }
    }

    /** What the start found in pool {@code pool}'s store, or null for a pool added since. */
    Reconciled reconciled(String pool) {
        return reconciled.get(pool);
    }

    private static String openStore(PoolConfig p) {
        return SpdkNative.lvs(SpdkNative.LVS_OPEN, p.baseBdev, p.name, p.clusterSizeOrDefault());
    }

    /** The lvol names the document gives pool {@code p}: its volumes and {@code <volume>@<snapshot>}. */
    private static Set<String> expectedLvols(PoolConfig p) {
        Set<String> out = new LinkedHashSet<>();
        for (VolumeConfig v : p.volumes) {
            out.add(v.name);
            v.snapshots.forEach(s -> out.add(snapshotLvol(v.name, s.name)));
        }
        return out;
    }

    /** Makes pool {@code p}'s volumes in a new store: each after its origin snapshot, its snapshots in order. */
    private void remake(PoolConfig p) {
        List<VolumeConfig> left = new ArrayList<>(p.volumes);
        Set<String> made = new LinkedHashSet<>();
        boolean progress = true;
        while (!left.isEmpty() && progress) {
            progress = false;
            for (var it = left.iterator(); it.hasNext(); ) {
                VolumeConfig v = it.next();
                if (v.origin != null && !made.contains(v.origin)) {
                    continue;
                }
                if (v.origin == null) {
                    SpdkNative.lvol(SpdkNative.LVOL_CREATE, p.name, v.name, v.name, bytes(v, v.numBlocks), !v.thick);
                } else {
                    SpdkNative.lvol(SpdkNative.LVOL_CLONE, p.name, v.origin, v.name, 0, true);
                }
                for (SnapshotConfig s : v.snapshots) {
                    SpdkNative.lvol(SpdkNative.LVOL_SNAPSHOT, p.name, v.name, snapshotLvol(v.name, s.name), 0, true);
                    made.add(snapshotLvol(v.name, s.name));
                }
                it.remove();
                progress = true;
            }
        }
    }

    /**
     * Adds pool {@code p}: makes its store on its base bdev, or takes the empty store of its name found there;
     * invalid when the store found holds lvols (they are kept) or SPDK refuses the bdev.
     */
    void addPool(PoolConfig p) {
        String how = call(() -> openStore(p), "baseBdev");
        StoreInfo i = info(p.name);
        if (!i.lvols().isEmpty()) {
            throw ControlException.invalid("baseBdev: bdev " + p.baseBdev + " holds lvol store " + p.name
                + " with lvols " + i.lvols().keySet() + " already; a new pool starts empty");
        }
        LOG.info("pool {}: lvol store {} on bdev {} ({} clusters of {} bytes free)", p.name, how, p.baseBdev,
            i.freeClusters(), i.clusterBytes());
    }

    /** Destroys pool {@code p}'s store, which holds no lvol; its base bdev stays. */
    void removePool(PoolConfig p) {
        call(() -> SpdkNative.lvs(SpdkNative.LVS_REMOVE, null, p.name, 0), "name");
        reconciled.remove(p.name);
    }

    PoolInfo poolInfo(PoolConfig p) {
        StoreInfo i = info(p.name);
        long size = i.totalClusters() * i.clusterBytes();
        long free = i.freeClusters() * i.clusterBytes();
        long used = size - free;
        boolean above = size > 0 && used * 100 > size * p.warnPercentOrDefault();
        if (above && !aboveWatermark.getOrDefault(p.name, false)) {
            crossings.merge(p.name, 1L, Long::sum);
            LOG.warn("pool {}: {} of {} bytes in use, above its warning watermark of {}%", p.name, used, size,
                p.warnPercentOrDefault());
        }
        aboveWatermark.put(p.name, above);
        return new PoolInfo(p.name, p.kind, null, size, used, free, p.warnPercentOrDefault(),
            crossings.getOrDefault(p.name, 0L), p.volumes.size());
    }

    void createVolume(String pool, VolumeConfig v) {
        StoreInfo i = info(pool);
        checkFits(pool, i, v.blockSize, bytes(v, v.numBlocks));
        lvolName(v.name, "name");
        call(() -> SpdkNative.lvol(SpdkNative.LVOL_CREATE, pool, v.name, v.name, bytes(v, v.numBlocks), !v.thick),
            "size");
    }

    /** Resizes the lvol: a grow is live, SPDK tells the namespaces on it (changed-namespace AEN). */
    void resizeVolume(String pool, VolumeConfig v, long numBlocks) {
        checkFits(pool, info(pool), v.blockSize, bytes(v, numBlocks));
        call(() -> SpdkNative.lvol(SpdkNative.LVOL_RESIZE, pool, v.name, null, bytes(v, numBlocks), true), "size");
    }

    void deleteVolume(String pool, String volume) {
        call(() -> SpdkNative.lvol(SpdkNative.LVOL_DESTROY, pool, volume, null, 0, true), "name");
    }

    void deleteSnapshot(String pool, String volume, String snapshot) {
        call(() -> SpdkNative.lvol(SpdkNative.LVOL_DESTROY, pool, snapshotLvol(volume, snapshot), null, 0, true),
            "name");
    }

    void cloneSnapshot(String pool, String volume, String snapshot, VolumeConfig clone) {
        lvolName(clone.name, "name");
        call(() -> SpdkNative.lvol(SpdkNative.LVOL_CLONE, pool, snapshotLvol(volume, snapshot), clone.name, 0, true),
            "name");
    }

    long allocatedBytes(String pool, String volume, String snapshot) {
        StoreInfo i = info(pool);
        Lvol l = i.lvols().get(snapshot == null ? volume : snapshotLvol(volume, snapshot));
        if (l == null) {
            throw ControlException.notFound("pool " + pool + " has no lvol " + (snapshot == null ? volume
                : snapshotLvol(volume, snapshot)));
        }
        return l.allocatedClusters() * i.clusterBytes();
    }

    /**
     * Snapshot {@code snapshot} of each of {@code volumes} at one instant (see the class comment), {@code doc} being
     * the committed document (the namespaces on the volumes); the pause in nanoseconds (0 when no namespace uses
     * them). A failure before all are taken destroys those taken.
     */
    long snapshot(TargetConfig doc, String pool, List<String> volumes, String snapshot) {
        for (String v : volumes) {
            lvolName(snapshotLvol(v, snapshot), "name");
        }
        Map<String, Integer> paused = new LinkedHashMap<>();
        for (String v : volumes) {
            for (SubsystemConfig s : doc.subsystems) {
                for (NamespaceConfig n : s.namespaces) {
                    if (VolumeConfig.bdevName(pool, v).equals(n.bdev)) {
                        paused.putIfAbsent(s.nqn, n.nsid);
                    }
                }
            }
        }
        long start = System.nanoTime();
        List<String> holding = new ArrayList<>();
        List<String> made = new ArrayList<>();
        try {
            for (var e : paused.entrySet()) {
                call(() -> SpdkNative.pauseSubsystem(e.getKey(), e.getValue(), true), "volumes");
                holding.add(e.getKey());
            }
            for (String v : volumes) {
                call(() -> SpdkNative.lvol(SpdkNative.LVOL_SNAPSHOT, pool, v, snapshotLvol(v, snapshot), 0, true),
                    "name");
                made.add(v);
            }
        } catch (RuntimeException e) {
            for (String v : made) {
                try {
                    SpdkNative.lvol(SpdkNative.LVOL_DESTROY, pool, snapshotLvol(v, snapshot), null, 0, true);
                } catch (SpdkException x) {
                    LOG.error("pool {}: snapshot {} of {} stays after a failed snapshot: {}", pool, snapshot, v,
                        x.getMessage());
                }
            }
            throw e;
        } finally {
            for (String nqn : holding) {
                try {
                    SpdkNative.pauseSubsystem(nqn, 0, false);
                } catch (SpdkException x) {
                    LOG.error("subsystem {} could not resume after snapshot {}: {}", nqn, snapshot, x.getMessage());
                }
            }
        }
        long pause = holding.isEmpty() ? 0 : System.nanoTime() - start;
        if (!holding.isEmpty()) {
            LOG.info("pool {}: snapshot {} of {}: subsystem(s) {} paused for {} us", pool, snapshot, volumes,
                holding, TimeUnit.NANOSECONDS.toMicros(pause));
        }
        return pause;
    }

    /** The store's capacity and lvols now. */
    StoreInfo info(String pool) {
        return parseInfo(call(() -> SpdkNative.lvs(SpdkNative.LVS_INFO, null, pool, 0), "pool"));
    }

    static StoreInfo parseInfo(String text) {
        String[] lines = text.split("\n");
        String[] head = lines[0].trim().split(" ");
        Map<String, Lvol> lvols = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            String[] f = lines[i].split("\t", -1);
            if (f.length == 7) {
                lvols.put(f[0], new Lvol(f[0], Long.parseLong(f[1]), Long.parseLong(f[2]), "1".equals(f[3]),
                    "1".equals(f[4]), Long.parseLong(f[5]), f[6].isEmpty() ? null : f[6]));
            }
        }
        return new StoreInfo(Long.parseLong(head[0]), Long.parseLong(head[1]), Long.parseLong(head[2]),
            Integer.parseInt(head[3]), lvols);
    }

    /** The lvol of snapshot {@code snapshot} of {@code volume}. */
    static String snapshotLvol(String volume, String snapshot) {
        return volume + "@" + snapshot;
    }

    private static void lvolName(String name, String field) {
        if (name.length() > MAX_LVOL_NAME) {
            throw ControlException.invalid(field + ": SPDK names an lvol in at most " + MAX_LVOL_NAME + " characters, '"
                + name + "' has " + name.length() + " (a snapshot's lvol is <volume>@<snapshot>)");
        }
    }

    /** An lvol's size must be whole clusters of the store, in blocks of the store's block size. */
    private static void checkFits(String pool, StoreInfo i, int blockSize, long bytes) {
        if (blockSize != i.blockBytes()) {
            throw ControlException.invalid("blockSize: pool " + pool + "'s lvol store has blocks of " + i.blockBytes()
                + " bytes (its base bdev's), got " + blockSize);
        }
        if (bytes % i.clusterBytes() != 0) {
            throw ControlException.invalid("size: " + bytes + " bytes is not a multiple of pool " + pool + "'s cluster"
                + " size " + i.clusterBytes() + " (SPDK sizes lvols in whole clusters)");
        }
    }

    private static long bytes(VolumeConfig v, long numBlocks) {
        return numBlocks * v.blockSize;
    }

    /** Runs a native step; SPDK's refusal becomes the API's status naming {@code field}. */
    private static <T> T call(Supplier<T> step, String field) {
        try {
            return step.get();
        } catch (SpdkException e) {
            ControlException c = SpdkEngine.mapped(e);
            throw new ControlException(c.kind(), field + ": " + e.getMessage());
        }
    }

    private static void call(Runnable step, String field) {
        call(() -> {
            step.run();
            return null;
        }, field);
    }
}

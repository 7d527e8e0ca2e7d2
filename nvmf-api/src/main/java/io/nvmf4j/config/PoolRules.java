package io.nvmf4j.config;

import java.math.BigInteger;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The rules of {@code pools} ({@link PoolConfig}, {@link VolumeConfig}, {@link SnapshotConfig}), part of
 * {@link ConfigValidator}: names, kinds the engine has, directories under {@code storage.fileDirectories} that no
 * other pool or file bdev shares, sizes, and lineage (a clone's origin is a snapshot that exists). The control layer
 * checks a size given in bytes with {@link #sizeProblem} before it becomes blocks.
 */
public final class PoolRules {
    /**
     * Pool, volume and snapshot names: 1..63 of A-Z a-z 0-9 . _ - not starting with '.' or '-' (no path character,
     * no '..' alone, never the '@' and '/' that join names into file and bdev names).
     */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,62}");
    public static final String NAME_RULE = "1..63 of A-Z a-z 0-9 . _ - not starting with '.' or '-'";
    private static final BigInteger MAX_BYTES = BigInteger.valueOf(ConfigValidator.MAX_BDEV_BYTES);

    private PoolRules() {
    }

    /** Null when {@code name} is a valid pool, volume or snapshot name, else why not (after {@code at}). */
    public static String nameProblem(String name, String at) {
        if (name == null || name.isEmpty()) {
            return at + ": missing";
        }
        return NAME.matcher(name).matches() ? null : at + ": must be " + NAME_RULE + ", got '" + name + "'";
    }

    /**
     * Null when {@code bytes} is a volume size for blocks of {@code blockSize}: positive, a multiple of the block
     * size, at most 1 PiB (so at most 2^64 too); else why not (after {@code at}).
     */
    public static String sizeProblem(BigInteger bytes, int blockSize, String at) {
        if (bytes == null) {
            return at + ": missing";
        }
        if (bytes.signum() <= 0) {
            return at + ": must be positive, got " + bytes;
        }
        if (bytes.compareTo(MAX_BYTES) > 0) {
            return at + ": " + bytes + " bytes exceed the largest volume (" + MAX_BYTES + " bytes, 1 PiB)";
        }
        if (blockSize > 0 && bytes.mod(BigInteger.valueOf(blockSize)).signum() != 0) {
            return at + ": " + bytes + " bytes is not a multiple of the block size " + blockSize;
        }
        return null;
    }

    static void validate(TargetConfig c, EngineCapabilities engine, List<String> p) {
        if (c.pools == null) {
            p.add("pools: must be a list (may be empty)");
            return;
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < c.pools.size(); i++) {
            PoolConfig pool = c.pools.get(i);
            String at = "pools[" + i + "]";
            if (pool == null) {
                p.add(at + ": null entry");
                continue;
            }
            add(p, nameProblem(pool.name, at + ".name"));
            if (pool.name != null && !names.add(pool.name)) {
                p.add(at + ".name: duplicate pool name '" + pool.name + "'");
            }
            if (pool.kind == null) {
                p.add(at + ".kind: missing (one of " + PoolConfig.KINDS + ")");
            } else if (!PoolConfig.KINDS.contains(pool.kind)) {
                p.add(at + ".kind: must be one of " + PoolConfig.KINDS + ", got '" + pool.kind + "'");
            } else if (!engine.poolKinds().contains(pool.kind)) {
                p.add(at + ".kind: " + engine.refusal("pool." + pool.kind));
            }
            if (PoolConfig.KIND_LVOL.equals(pool.kind)) {
                validateLvol(c, i, at, p);
            } else if (PoolConfig.KIND_RBD.equals(pool.kind)) {
                validateRbd(c, i, at, p);
            } else if (pool.pool != null || pool.cephConf != null || pool.clientName != null || pool.keyring != null) {
                p.add(at + ": pool, cephConf, clientName and keyring belong to rbd pools, not " + pool.kind);
            } else if (pool.path == null) {
                p.add(at + ".path: missing (the pool's directory)");
            } else {
                FilePaths.validatePoolPath(pool.path, c.storage, at + ".path", p);
                sharedDirectory(c, i, at, p);
            }
            if (pool.warnPercent != null && (pool.warnPercent < PoolConfig.MIN_WARN_PERCENT
                || pool.warnPercent > PoolConfig.MAX_WARN_PERCENT)) {
                p.add(at + ".warnPercent: must be " + PoolConfig.MIN_WARN_PERCENT + ".." + PoolConfig.MAX_WARN_PERCENT
                    + ", got " + pool.warnPercent);
            }
            validateVolumes(pool, at, p);
        }
    }

    /**
     * An lvol pool: no path; its base bdev a malloc or file bdev of the document that no namespace and no other pool
     * uses; its cluster size a power of two in range.
     */
    private static void validateLvol(TargetConfig c, int i, String at, List<String> p) {
        PoolConfig pool = c.pools.get(i);
        if (pool.path != null) {
            p.add(at + ".path: an lvol pool has no directory (it lives on baseBdev), got '" + pool.path + "'");
        }
        Long cs = pool.clusterSize;
        if (cs != null
            && (cs < PoolConfig.MIN_CLUSTER_SIZE || cs > PoolConfig.MAX_CLUSTER_SIZE || Long.bitCount(cs) != 1)) {
            p.add(at + ".clusterSize: must be a power of two " + PoolConfig.MIN_CLUSTER_SIZE + ".."
                + PoolConfig.MAX_CLUSTER_SIZE + ", got " + cs);
        }
        if (pool.baseBdev == null) {
            p.add(at + ".baseBdev: missing (the bdev the lvol store lives on)");
            return;
        }
        BdevConfig b = c.bdev(pool.baseBdev);
        if (b == null || BdevConfig.TYPE_VOLUME.equals(b.type)) {
            p.add(at + ".baseBdev: no bdev '" + pool.baseBdev + "'");
            return;
        }
        if (!"malloc".equals(b.type) && !"file".equals(b.type)) {
            p.add(at + ".baseBdev: bdev '" + b.name + "' is a " + b.type + " bdev; an lvol store lives on a malloc or"
                + " file bdev");
        }
        for (int j = 0; j < i; j++) {
            PoolConfig o = c.pools.get(j);
            if (o != null && pool.baseBdev.equals(o.baseBdev)) {
                p.add(at + ".baseBdev: bdev '" + b.name + "' holds pool '" + o.name + "' already");
            }
        }
        if (c.subsystems != null) {
            for (SubsystemConfig s : c.subsystems) {
                List<NamespaceConfig> ns = s == null || s.namespaces == null ? List.of() : s.namespaces;
                for (NamespaceConfig n : ns) {
                    if (n != null && pool.baseBdev.equals(n.bdev)) {
                        p.add(at + ".baseBdev: bdev '" + b.name + "' backs namespace " + n.nsid + " of " + s.nqn
                            + "; the lvol store needs it alone");
                    }
                }
            }
        }
    }

    /**
     * An rbd pool: reached as an rbd bdev reaches its pool ({@link ConfigValidator#validateRbdConnection}); no path,
     * base bdev or cluster size; no other rbd pool of the document on the same RADOS pool of the same cluster (the
     * images are the volumes, named like them).
     */
    private static void validateRbd(TargetConfig c, int i, String at, List<String> p) {
        PoolConfig pool = c.pools.get(i);
        ConfigValidator.validateRbdConnection(pool.pool, pool.cephConf, pool.clientName, pool.keyring, c.storage, at,
            "an rbd pool", p);
        if (pool.path != null || pool.baseBdev != null || pool.clusterSize != null) {
            p.add(at + ": path, baseBdev and clusterSize do not belong to an rbd pool (it lives in RADOS pool 'pool')");
        }
        for (int j = 0; j < i; j++) {
            PoolConfig o = c.pools.get(j);
            if (o != null && PoolConfig.KIND_RBD.equals(o.kind) && pool.pool != null && pool.pool.equals(o.pool)
                && java.util.Objects.equals(pool.cephConf, o.cephConf)) {
                p.add(at + ".pool: RADOS pool '" + pool.pool + "' holds pool '" + o.name + "' already");
            }
        }
    }

    /** No two pools in one directory or one inside another, and no file bdev inside a pool's directory. */
    private static void sharedDirectory(TargetConfig c, int i, String at, List<String> p) {
        String path = c.pools.get(i).path;
        for (int j = 0; j < i; j++) {
            PoolConfig o = c.pools.get(j);
            if (o != null && o.path != null && (FilePaths.inside(path, o.path) || FilePaths.inside(o.path, path))) {
                p.add(at + ".path: " + path + " overlaps pool '" + o.name + "' (" + o.path
                    + "); a pool's directory holds its own files only");
            }
        }
        if (c.bdevs != null) {
            for (BdevConfig b : c.bdevs) {
                if (b != null && b.path != null && FilePaths.inside(b.path, path)) {
                    p.add(at + ".path: file bdev '" + b.name + "' (" + b.path + ") lies in it; a pool's directory holds"
                        + " its own files only");
                }
            }
        }
    }

    private static void validateVolumes(PoolConfig pool, String at, List<String> p) {
        if (pool.volumes == null) {
            p.add(at + ".volumes: must be a list (may be empty)");
            return;
        }
        Set<String> names = new HashSet<>();
        for (int j = 0; j < pool.volumes.size(); j++) {
            VolumeConfig v = pool.volumes.get(j);
            String vat = at + ".volumes[" + j + "]";
            if (v == null) {
                p.add(vat + ": null entry");
                continue;
            }
            add(p, nameProblem(v.name, vat + ".name"));
            if (v.name != null && !names.add(v.name)) {
                p.add(vat + ".name: duplicate volume name '" + v.name + "' in pool '" + pool.name + "'");
            }
            if (v.blockSize != 512 && v.blockSize != 4096) {
                p.add(vat + ".blockSize: must be 512 or 4096, got " + v.blockSize);
            } else if (v.numBlocks < 1 || v.numBlocks > ConfigValidator.MAX_BDEV_BYTES / v.blockSize) {
                p.add(vat + ".numBlocks: must be 1.." + ConfigValidator.MAX_BDEV_BYTES / v.blockSize + " (1 PiB), got "
                    + v.numBlocks);
            }
            if (v.origin != null && originProblem(pool, v.origin) != null) {
                p.add(vat + ".origin: " + originProblem(pool, v.origin));
            }
            validateSnapshots(v, vat, p);
        }
    }

    /** Null when {@code origin} ({@code volume@snapshot}) names a snapshot of {@code pool}, else why not. */
    private static String originProblem(PoolConfig pool, String origin) {
        int at = origin.indexOf('@');
        VolumeConfig v = at < 0 ? null : pool.volume(origin.substring(0, at));
        if (v == null || v.snapshot(origin.substring(at + 1)) == null) {
            return "no snapshot '" + origin + "' in pool '" + pool.name + "' (volume@snapshot)";
        }
        return null;
    }

    private static void validateSnapshots(VolumeConfig v, String vat, List<String> p) {
        if (v.snapshots == null) {
            p.add(vat + ".snapshots: must be a list (may be empty)");
            return;
        }
        Set<String> names = new HashSet<>();
        for (int k = 0; k < v.snapshots.size(); k++) {
            SnapshotConfig s = v.snapshots.get(k);
            String sat = vat + ".snapshots[" + k + "]";
            if (s == null) {
                p.add(sat + ": null entry");
                continue;
            }
            add(p, nameProblem(s.name, sat + ".name"));
            if (s.name != null && !names.add(s.name)) {
                p.add(sat + ".name: duplicate snapshot name '" + s.name + "' of volume '" + v.name + "'");
            }
            if (s.numBlocks < 1) {
                p.add(sat + ".numBlocks: must be positive, got " + s.numBlocks);
            }
            if (s.group != null) {
                add(p, nameProblem(s.group, sat + ".group"));
            }
        }
    }

    private static void add(List<String> p, String problem) {
        if (problem != null) {
            p.add(problem);
        }
    }
}

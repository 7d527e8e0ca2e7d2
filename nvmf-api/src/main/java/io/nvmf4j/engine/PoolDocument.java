package io.nvmf4j.engine;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.PoolRules;
import io.nvmf4j.config.SnapshotConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.VolumeConfig;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * The document rules of pools, volumes and snapshots for {@link ConfigController}: lookups that answer not found,
 * the checks of a request's fields (invalid, naming the field), and the lineage and use rules that refuse a delete
 * or a shrink (conflict). Nothing here changes a document.
 */
final class PoolDocument {
    private PoolDocument() {
    }

    static PoolConfig pool(TargetConfig c, String name) {
        PoolConfig p = c.pool(name);
        if (p == null) {
            throw ControlException.notFound("no pool " + name);
        }
        return p;
    }

    static VolumeConfig volume(TargetConfig c, String pool, String name) {
        VolumeConfig v = pool(c, pool).volume(name);
        if (v == null) {
            throw ControlException.notFound("no volume " + name + " in pool " + pool);
        }
        return v;
    }

    static SnapshotConfig snapshot(TargetConfig c, String pool, String volume, String name) {
        SnapshotConfig s = volume(c, pool, volume).snapshot(name);
        if (s == null) {
            throw ControlException.notFound("no snapshot " + name + " of volume " + volume + " in pool " + pool);
        }
        return s;
    }

    /** Invalid (naming {@code field}) unless {@code name} is a valid pool, volume or snapshot name. */
    static void checkName(String name, String field) {
        String problem = PoolRules.nameProblem(name, field);
        if (problem != null) {
            throw ControlException.invalid(problem);
        }
    }

    /** Conflict when pool {@code p} has a volume named {@code name}. */
    static void checkVolumeFree(PoolConfig p, String name) {
        if (p.volume(name) != null) {
            throw ControlException.conflict("name: volume " + name + " already exists in pool " + p.name);
        }
    }

    /** The block size a request asks for (null: 512); invalid unless 512 or 4096. */
    static int blockSize(Integer requested) {
        int bs = requested == null ? 512 : requested;
        if (bs != 512 && bs != 4096) {
            throw ControlException.invalid("blockSize: must be 512 or 4096, got " + bs);
        }
        return bs;
    }

    /** {@code bytes} as blocks of {@code blockSize}; invalid (naming {@code size}) unless a valid volume size. */
    static long blocks(BigInteger bytes, int blockSize) {
        String problem = PoolRules.sizeProblem(bytes, blockSize, "size");
        if (problem != null) {
            throw ControlException.invalid(problem);
        }
        return bytes.longValueExact() / blockSize;
    }

    /** The namespace that uses volume {@code volume} of {@code pool} as {@code <nqn>/<nsid>}, or null. */
    static String namespaceOf(TargetConfig c, String pool, String volume) {
        String bdev = VolumeConfig.bdevName(pool, volume);
        for (SubsystemConfig s : c.subsystems) {
            for (NamespaceConfig n : s.namespaces) {
                if (bdev.equals(n.bdev)) {
                    return s.nqn + "/" + n.nsid;
                }
            }
        }
        return null;
    }

    /** The volumes of {@code pool} cloned from snapshot {@code snapshot} of {@code volume}. */
    static List<String> clonesOf(PoolConfig pool, String volume, String snapshot) {
        String origin = volume + "@" + snapshot;
        List<String> out = new ArrayList<>();
        for (VolumeConfig v : pool.volumes) {
            if (origin.equals(v.origin)) {
                out.add(v.name);
            }
        }
        return out;
    }

    /** Conflict unless volume {@code v} of {@code pool} may be deleted: no namespace uses it, no snapshot left. */
    static void checkDeletable(TargetConfig c, PoolConfig pool, VolumeConfig v) {
        String ns = namespaceOf(c, pool.name, v.name);
        if (ns != null) {
            throw ControlException.conflict("volume " + v.name + " backs namespace " + ns + "; remove the namespace"
                + " first");
        }
        if (!v.snapshots.isEmpty()) {
            List<String> names = v.snapshots.stream().map(s -> s.name).toList();
            throw ControlException.conflict("volume " + v.name + " has snapshot(s) " + names + "; delete them (and"
                + " their clones) first");
        }
    }

    /** Conflict while a volume was cloned from the snapshot (the lineage the document keeps). */
    static void checkSnapshotDeletable(PoolConfig pool, String volume, String snapshot) {
        List<String> clones = clonesOf(pool, volume, snapshot);
        if (!clones.isEmpty()) {
            throw ControlException.conflict("snapshot " + volume + "@" + snapshot + " has clone(s) " + clones
                + "; delete them first");
        }
    }
}

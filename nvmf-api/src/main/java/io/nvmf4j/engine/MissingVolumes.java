package io.nvmf4j.engine;

import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.VolumeConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a start found missing from the pools, and the one rule every engine follows for it: a volume or snapshot the
 * document names that its pool lacks (a reflink-dir file, an lvol, an RBD image) does not stop the start. It is
 * logged and kept here with its cause; the volume lists as {@link #MISSING} with 0 allocated bytes; a namespace on it
 * is not served (it stays in the document, its nsid inactive for every host), logged once with its cause. The control
 * layer refuses what would need the missing medium (a namespace added on it, a resize, a snapshot, a clone) and lets
 * the volume, its snapshots and the namespace be deleted from the document; a volume found again serves after the
 * next start.
 *
 * <p>Called by the engine that owns it, holding its monitor (the control layer reads it holding the same monitor).
 */
public final class MissingVolumes {
    private static final Logger LOG = LoggerFactory.getLogger(MissingVolumes.class);
    /** A volume's state in the listing: its medium is there. */
    public static final String AVAILABLE = "available";
    /** A volume's state in the listing: its pool lacked it at the start. */
    public static final String MISSING = "missing";

    /**
     * {@code <pool>/<volume>} (a volume's bdev name) or {@code <pool>/<volume>@<snapshot>} → why, in the words of the
     * pool's medium ("file v1.vol is not in /srv/p1", "the lvol store on bdev f0 has no lvol v1").
     */
    private final Map<String, String> missing = new LinkedHashMap<>();

    private static String key(String pool, String volume, String snapshot) {
        return VolumeConfig.bdevName(pool, volume) + (snapshot == null ? "" : "@" + snapshot);
    }

    /** Records that pool {@code pool} lacks volume {@code volume} (snapshot {@code snapshot}, when not null). */
    public void add(String pool, String volume, String snapshot, String cause) {
        missing.put(key(pool, volume, snapshot), cause);
    }

    /** Why pool {@code pool} lacks the volume (snapshot, when not null), or null when it has it. */
    public String cause(String pool, String volume, String snapshot) {
        return missing.get(key(pool, volume, snapshot));
    }

    /** Why volume bdev {@code bdev} ({@code <pool>/<volume>}) is missing, or null (also for any other bdev). */
    public String cause(String bdev) {
        return missing.get(bdev);
    }

    /** Forgets a missing volume or snapshot that the document no longer names; its cause, or null. */
    public String remove(String pool, String volume, String snapshot) {
        return missing.remove(key(pool, volume, snapshot));
    }

    /**
     * Whether namespace {@code n} of subsystem {@code nqn} can be served: false when its bdev is a missing volume,
     * which is logged (the engine then leaves the namespace out of its subsystem).
     */
    public boolean serves(String nqn, NamespaceConfig n) {
        String cause = missing.get(n.bdev);
        if (cause == null) {
            return true;
        }
        LOG.error("namespace {} of {}: not served: its volume {} is missing ({}); it stays in the configuration "
            + "(remove it and delete the volume, or bring the volume back and restart)", n.nsid, nqn, n.bdev, cause);
        return false;
    }

    /** The namespaces of {@code doc} that are not served, {@code <nqn>/<nsid>} → why. */
    public Map<String, String> unservedNamespaces(TargetConfig doc) {
        Map<String, String> out = new LinkedHashMap<>();
        for (SubsystemConfig s : doc.subsystems) {
            for (NamespaceConfig n : s.namespaces) {
                String cause = missing.get(n.bdev);
                if (cause != null) {
                    out.put(s.nqn + "/" + n.nsid, "volume " + n.bdev + " is missing (" + cause + ")");
                }
            }
        }
        return out;
    }

    /** Everything missing, {@code <pool>/<volume>[@<snapshot>]} → why. */
    public Map<String, String> all() {
        return Map.copyOf(missing);
    }
}

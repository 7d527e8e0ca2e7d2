package io.nvmf4j.service.profile;

import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.TargetConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The engine a profile's target runs on this machine and why, as {@code check} and {@code setup} print it in one
 * line ({@code engine: spdk (...)}).
 *
 * <ul>
 * <li>An engine named in the configuration the service reads ({@link ProfileSetup#STATE_CONFIG}, which setup keeps
 * where it exists) always wins over the profile's default; one that cannot run here comes with its cause and a fix
 * ({@link #runs()} false). A kept configuration that names none runs the document's default, java.</li>
 * <li>Otherwise the profile's default ({@link Profile.Machine#engine}; none: java) where it can run here, else the
 * java engine. The spdk engine can where its library for this architecture is in the install and loads (its own
 * check, through {@link EngineProbe}) and the kernel has 2 MiB hugepages; reserving them and the service's
 * access to their hugetlbfs are setup's ({@link ProfileSetup}).</li>
 * </ul>
 *
 * @param fix null when the engine can run here, else what makes the configuration start
 */
public record EngineChoice(String engine, String reason, String fix) {
    /** The engine of a document that names none. */
    static final String DOCUMENT_DEFAULT = new TargetConfig().engine;

    /** False only for an engine the configuration names that cannot run here. */
    public boolean runs() {
        return fix == null;
    }

    /** The line of check and setup: {@code engine: NAME (REASON)}. */
    public String line() {
        return "engine: " + engine + " (" + reason + ")";
    }

    /** The engine profile {@code p} runs on the machine of {@code m}, its engines asked through {@code probe}. */
    public static EngineChoice choose(Profile p, MachineFacts m, EngineProbe probe) {
        EngineChoice byProfile = byProfile(p, m, probe);
        String config = ProfileSetup.STATE_CONFIG;
        Path file = m.root.resolve(config.substring(1));
        if (!Files.exists(file)) {
            return byProfile;
        }
        String named;
        try {
            named = named(file);
        } catch (IOException | RuntimeException e) {
            return new EngineChoice(byProfile.engine, byProfile.reason + "; " + config + " could not be read ("
                + e.getMessage() + "): an engine it names would win", null);
        }
        if (named == null) {
            return new EngineChoice(DOCUMENT_DEFAULT, config + ", which setup keeps, names no engine: the document's "
                + "default" + (byProfile.engine.equals(DOCUMENT_DEFAULT) ? "" : "; add \"engine\": \""
                + byProfile.engine + "\" to it for the profile's default here"), null);
        }
        String wins = "named in " + config + ", which wins over the profile's default"
            + (byProfile.engine.equals(named) ? "" : " (here: " + byProfile.engine + ")");
        String cause = probe.unavailabilityCause(named);
        if (cause == null) {
            return new EngineChoice(named, wins + runsOn(probe, named, "; "), null);
        }
        if (!probe.onThisMachine()) {
            return new EngineChoice(named, wins + "; " + cause, null);
        }
        return new EngineChoice(named, wins + "; but " + cause, "name an engine that runs here in " + config
            + ": \"engine\": \"" + byProfile.engine + "\"");
    }

    /** The profile's default where it can run on the machine of {@code m}, else the document's default. */
    private static EngineChoice byProfile(Profile p, MachineFacts m, EngineProbe probe) {
        String preferred = p.machine.engine != null ? p.machine.engine : DOCUMENT_DEFAULT;
        String cause = probe.unavailabilityCause(preferred);
        // an engine that places its memory itself takes it in 2 MiB hugepages (SPDK's)
        EngineCapabilities can = EngineCapabilities.of(preferred);
        boolean ownMemory = can != null && !can.has(EngineCapabilities.Feature.POLL_GROUP_PLACEMENT);
        if (cause == null && ownMemory && m.hugepages2m() < 0) {
            cause = "engine " + preferred + " cannot run here: this kernel has no 2 MiB hugepages (no "
                + "/sys/kernel/mm/hugepages/hugepages-2048kB), which SPDK's memory takes";
        }
        if (cause != null) {
            return new EngineChoice(DOCUMENT_DEFAULT, cause + "; the profile runs " + preferred + " where it can", null);
        }
        return new EngineChoice(preferred, "the profile's default" + runsOn(probe, preferred, ": ")
            + (ownMemory ? "; this kernel has 2 MiB hugepages, which setup reserves for SPDK's memory" : ""), null);
    }

    /** {@code SEP<library> present and loads}, or nothing for an engine with nothing to say. */
    private static String runsOn(EngineProbe probe, String engine, String sep) {
        String on = probe.runsOn(engine);
        return on == null ? "" : sep + on + " present and loads";
    }

    /** The engine {@code file} names (its journal's changes applied), or null when it names none. */
    private static String named(Path file) throws IOException {
        String engine = ConfigStore.load(file).engine;
        boolean inFile = ConfigStore.mapper().readTree(Files.readAllBytes(file)).has("engine");
        return inFile || !DOCUMENT_DEFAULT.equals(engine) ? engine : null;
    }
}

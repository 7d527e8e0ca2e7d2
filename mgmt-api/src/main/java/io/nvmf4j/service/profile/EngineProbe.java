package io.nvmf4j.service.profile;

import io.nvmf4j.engine.Engines;

import java.nio.file.Path;

/**
 * What {@link EngineChoice} asks about an engine: whether it can run on the machine checked and, when it can, what it
 * runs on. {@link #of} asks this process about the machine it runs on ({@link Engines}: each engine's own check, the
 * spdk engine's being that its library for this architecture is in the install and loads); the engines of a machine
 * under another root (an image, a test tree) cannot be loaded from here, so an engine with a native library is not
 * checked for it.
 */
public interface EngineProbe {
    /** Null when {@code engine} can run on the machine checked, else why not (one line). */
    String unavailabilityCause(String engine);

    /** What {@code engine} runs on when it can run ({@code libnvmf4j_spdk for aarch64 (SPDK v26.05)}), or null. */
    String runsOn(String engine);

    /** Whether the answers are about the machine itself; false: an engine's cause is only that it was not checked. */
    boolean onThisMachine();

    /** The probe for the machine of {@code facts}: this process's engines when it is this machine. */
    static EngineProbe of(MachineFacts facts) {
        return facts.isThisMachine() ? thisProcess() : notChecked(facts.root);
    }

    /** This process's engines, through {@link Engines}. */
    static EngineProbe thisProcess() {
        return new EngineProbe() {
            @Override
            public String unavailabilityCause(String engine) {
                return Engines.unavailabilityCause(engine);
            }

            @Override
            public String runsOn(String engine) {
                return Engines.runsOn(engine);
            }

            @Override
            public boolean onThisMachine() {
                return true;
            }
        };
    }

    /** A machine under {@code root}: the java engine as here (it needs no library of its own), no other engine. */
    static EngineProbe notChecked(Path root) {
        return new EngineProbe() {
            @Override
            public String unavailabilityCause(String engine) {
                // an engine that runs here on no native library of its own runs there too
                if (Engines.unavailabilityCause(engine) == null && Engines.runsOn(engine) == null) {
                    return null;
                }
                return "engine " + engine + " not checked for the machine under " + root + ": its library loads only"
                    + " on the machine itself (check there)";
            }

            @Override
            public String runsOn(String engine) {
                return null;
            }

            @Override
            public boolean onThisMachine() {
                return false;
            }
        };
    }
}

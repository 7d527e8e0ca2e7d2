package io.nvmf4j.service.profile;

import io.nvmf4j.engine.Engines;

/**
 * The engines as a machine has them, for {@link EngineChoice}: the java engine runs; the spdk engine runs on
 * {@code spdkRunsOn} or, when {@code spdkCause} is set, cannot for that cause (its text as
 * {@link Engines#unavailabilityCause} gives it).
 */
record FakeProbe(String spdkCause, String spdkRunsOn) implements EngineProbe {
    /** libnvmf4j_spdk for aarch64 in the install, loading. */
    static final FakeProbe SPDK_LOADS = new FakeProbe(null, "libnvmf4j_spdk for aarch64 (SPDK v26.05)");
    /** The package of an x86-64 build without SPDK cross-built: the .unavailable note instead of the library. */
    static final FakeProbe SPDK_ABSENT = new FakeProbe("engine spdk cannot run here: libnvmf4j_spdk has no aarch64 "
        + "build in this package: SPDK and DPDK are not cross-built for aarch64 (spdk-jni/spdk-build.sh --arch "
        + "aarch64)", null);
    /** The library there but not loading: a library it needs is missing on the machine. */
    static final FakeProbe SPDK_UNLOADABLE = new FakeProbe("engine spdk cannot run here: native library nvmf4j_spdk "
        + "could not be loaded: loadLibrary(nvmf4j_spdk_aarch64): no nvmf4j_spdk_aarch64 in java.library.path; "
        + "META-INF/native/libnvmf4j_spdk_aarch64.so: libibverbs.so.1: cannot open shared object file: No such file "
        + "or directory", null);

    @Override
    public String unavailabilityCause(String engine) {
        return Engines.SPDK.equals(engine) ? spdkCause : null;
    }

    @Override
    public String runsOn(String engine) {
        return Engines.SPDK.equals(engine) && spdkCause == null ? spdkRunsOn : null;
    }

    @Override
    public boolean onThisMachine() {
        return true;
    }
}

package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Settings of the {@code spdk} engine (read at start; the java engine ignores them).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class SpdkConfig {
    /** The cores SPDK's reactors run on, as a hex mask ({@code 0x1}: core 0) or a list ({@code [0,2-3]}). */
    public String coreMask = "0x1";
    /** Memory SPDK's environment reserves at start, MiB (hugepages unless {@link #hugepages} is false). */
    @Range(min = 512, max = 1 << 20)
    public int memSizeMb = 1024;
    /**
     * Back SPDK's memory with hugepages (2 MiB pages must be reserved and hugetlbfs mounted); false runs SPDK
     * with {@code --no-huge} in ordinary memory of {@link #memSizeMb}.
     */
    public boolean hugepages = true;
    /**
     * Claim the cores with SPDK's lock files ({@code /var/tmp/spdk_cpu_lock_NNN}), so a second SPDK process on
     * the same core is refused at start; false shares them (test suites running side by side).
     */
    public boolean coreLocks = true;
    /**
     * Keep the JVM's own threads (GC, JIT, the API) off the reactors' cores once SPDK runs, so a busy-polling
     * reactor has its core to itself as in a standalone nvmf_tgt (nothing changes when no other CPU is left).
     */
    public boolean isolateCores = true;
    /** How long a control call may take inside SPDK before it fails, ms. */
    @Range(min = 1000, max = 600_000)
    public int callTimeoutMs = 30000;
    /**
     * Buffers of each SPDK transport's shared pool (SPDK's {@code num_shared_buffers}; 0: SPDK's default).
     */
    @Range(min = 0, max = 1 << 20)
    public int sharedBuffers = 0;
}

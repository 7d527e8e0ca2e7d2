package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** Options of the NVMe/TCP transport (one set for every TCP listener). */
@JsonIgnoreProperties(ignoreUnknown = false)
public final class TcpTransportConfig {
    /** In-capsule data size in bytes for I/O queues; IOCCSZ is derived from it. */
    @Range(min = 0, max = 131072, multipleOf = 16)
    public int inCapsuleDataSize = 8192;
    /** Largest I/O queue size (entries) a host may ask for. */
    @Range(min = 16, max = 1024)
    public int maxQueueDepth = 128;
    /** Largest number of I/O queues per controller. */
    @Range(min = 1, max = 128)
    public int maxIoQueues = 8;
    /**
     * The smallest transfer size a target can report, for either transport: MDTS is 2^n pages of 4 KiB and 0 means
     * no limit, so one page cannot be said.
     */
    public static final int MIN_MDTS_BYTES = 8192;

    /** Maximum data transfer size in bytes; a power of two of at least 8 KiB (MDTS is its log2 in 4 KiB pages). */
    @Range(min = MIN_MDTS_BYTES, max = 8 << 20)
    public int mdtsBytes = 131072;
    /** Largest H2CData PDU payload the target accepts (MAXH2CDATA in ICResp). */
    @Range(min = 4096, max = 8 << 20, multipleOf = 4)
    public int maxH2cData = 131072;
    /** Send C2HData with the SUCCESS flag (no CapsuleResp) when the host did not disable it. */
    public boolean c2hSuccess = true;
    /**
     * Also send C2HData with the SUCCESS flag to a host that did not disable SQ flow control, as SPDK's nvmf_tgt
     * does ({@code c2h_success}): one PDU less per read, but that host gets no SQHD for those reads. The Linux
     * host and SPDK's host accept it; the NVMe/TCP specification and the kernel's nvmet keep SUCCESS for hosts
     * that disabled SQ flow control, hence off by default.
     */
    public boolean c2hSuccessWithSqFlowControl = false;
    /**
     * A connection that has not sent ICReq and completed a Fabrics Connect within this many milliseconds is
     * closed (logged, counted); 0 disables the limit. nvmet's TLS handshake limit defaults to 10 s too.
     */
    @Range(min = 0, max = 3_600_000)
    public int connectTimeoutMs = 10000;
    /**
     * Connections (one per queue: admin or I/O) a TCP listener holds at once; one more is closed at accept with a
     * WARN line naming this limit. 1..1048576.
     */
    @Range(min = 1, max = 1 << 20)
    public int maxConnectionsPerListener = 4096;
    /** Connections one host address may hold on a TCP listener at once; beyond it likewise. 1..1048576. */
    @Range(min = 1, max = 1 << 20)
    public int maxConnectionsPerHost = 1024;
    /**
     * SO_SNDBUF and SO_RCVBUF of every connection in bytes, as SPDK's posix sock sets them ({@code send_buf_size},
     * {@code recv_buf_size}, 2 MiB there); the kernel caps them at {@code net.core.wmem_max} / {@code rmem_max},
     * doubles them for its bookkeeping and stops autotuning them. 0 (the default) leaves the kernel's autotuning
     * ({@code net.ipv4.tcp_wmem}, {@code tcp_rmem}): SPDK's 2 MiB changed none of the benchmark rows here
     * (docs/benchmarks-history.md, "Socket buffers"). 0 or 4096..1073741824.
     */
    @Range(min = 0, max = 1 << 30)
    public int socketBufferBytes = 0;
}

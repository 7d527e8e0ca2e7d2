package io.nvmf4j.testhost;

import java.time.Duration;

/**
 * What a {@link TcpHost} asks for in ICReq, and its own limits.
 *
 * @param headerDigest      request HDGST_ENABLE
 * @param dataDigest        request DDGST_ENABLE
 * @param inCapsuleDataSize writes up to this size go in-capsule, larger ones wait for R2T
 * @param timeout           how long a synchronous wait lasts before failing
 * @param hpda              ICReq's HPDA: C2HData data must start at a multiple of (hpda + 1) * 4 bytes
 */
public record TcpHostOptions(boolean headerDigest, boolean dataDigest, int inCapsuleDataSize, Duration timeout,
                             int hpda) {
    public static final TcpHostOptions DEFAULT = new TcpHostOptions(false, false, 8192, Duration.ofSeconds(10));
    public static final TcpHostOptions DIGESTS = new TcpHostOptions(true, true, 8192, Duration.ofSeconds(10));

    /** HPDA 0: no alignment asked for. */
    public TcpHostOptions(boolean headerDigest, boolean dataDigest, int inCapsuleDataSize, Duration timeout) {
        this(headerDigest, dataDigest, inCapsuleDataSize, timeout, 0);
    }

    public TcpHostOptions withInCapsuleDataSize(int size) {
        return new TcpHostOptions(headerDigest, dataDigest, size, timeout, hpda);
    }

    public TcpHostOptions withHpda(int value) {
        return new TcpHostOptions(headerDigest, dataDigest, inCapsuleDataSize, timeout, value);
    }
}

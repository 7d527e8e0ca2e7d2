package io.nvmf4j.testhost;

import java.time.Duration;

/**
 * What a {@link TcpHost} asks for in ICReq, and its own limits.
 *
 * @param headerDigest      request HDGST_ENABLE
 * @param dataDigest        request DDGST_ENABLE
 * @param inCapsuleDataSize writes up to this size go in-capsule, larger ones wait for R2T
 * @param timeout           how long a synchronous wait lasts before failing
 */
public record TcpHostOptions(boolean headerDigest, boolean dataDigest, int inCapsuleDataSize, Duration timeout) {
    public static final TcpHostOptions DEFAULT = new TcpHostOptions(false, false, 8192, Duration.ofSeconds(10));
    public static final TcpHostOptions DIGESTS = new TcpHostOptions(true, true, 8192, Duration.ofSeconds(10));

    public TcpHostOptions withInCapsuleDataSize(int size) {
        return new TcpHostOptions(headerDigest, dataDigest, size, timeout);
    }
}

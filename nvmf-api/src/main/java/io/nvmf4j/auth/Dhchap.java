package io.nvmf4j.auth;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/**
 * The DH-HMAC-CHAP computations (NVMe Base 2.x section 8.3.4.5; Linux {@code drivers/nvme/common/auth.c} and
 * {@code nvmet_auth_host_hash} / {@code nvmet_auth_ctrl_hash}): key transformation, augmented challenge and the two
 * responses. Stateless; every method allocates (authentication is not on the I/O path).
 */
public final class Dhchap {
    public static final int SHA256 = 1;
    public static final int SHA384 = 2;
    public static final int SHA512 = 3;
    private static final byte[] FABRICS = "NVMe-over-Fabrics".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HOST_HOST = "HostHost".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONTROLLER = "Controller".getBytes(StandardCharsets.US_ASCII);

    private Dhchap() {
    }

    /** Digest length of hash {@code id}, or 0 for an unknown one. */
    public static int hashLength(int id) {
        return switch (id) {
            case SHA256 -> 32;
            case SHA384 -> 48;
            case SHA512 -> 64;
            default -> 0;
        };
    }

    public static String hashName(int id) {
        return switch (id) {
            case SHA256 -> "SHA-256";
            case SHA384 -> "SHA-384";
            case SHA512 -> "SHA-512";
            default -> throw new IllegalArgumentException("unknown hash id " + id);
        };
    }

    static Mac hmac(int id, byte[] key) {
        try {
            String name = "Hmac" + hashName(id).replace("-", "");
            Mac mac = Mac.getInstance(name);
            mac.init(new SecretKeySpec(key, name));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC " + id + " unavailable", e);
        }
    }

    static byte[] digest(int id, byte[] data) {
        try {
            return MessageDigest.getInstance(hashName(id)).digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(hashName(id) + " unavailable", e);
        }
    }

    /** {@code nvme_auth_transform_key}: the key itself for hash 0, else HMAC_hash(key, nqn || "NVMe-over-Fabrics"). */
    public static byte[] transformKey(DhchapKey key, String nqn) {
        if (key.hashId() == 0) {
            return key.secret();
        }
        Mac mac = hmac(key.hashId(), key.secret());
        mac.update(nqn.getBytes(StandardCharsets.US_ASCII));
        return mac.doFinal(FABRICS);
    }

    /** {@code nvme_auth_augmented_challenge}: HMAC_hash(H(sessionKey), challenge). */
    public static byte[] augmentedChallenge(int hashId, byte[] sessionKey, byte[] challenge) {
        return hmac(hashId, digest(hashId, sessionKey)).doFinal(challenge);
    }

    /**
     * The host's response R1 = HMAC(Kh', Ca1 || S1 || TID || SC_C || "HostHost" || hostnqn || 00h || subnqn), where
     * Kh' is the host key transformed with the host NQN and Ca1 the (augmented) challenge C1.
     */
    public static byte[] hostResponse(int hashId, byte[] transformedKey, byte[] challenge, int seqnum, int tid,
                                      int scc, String hostnqn, String subnqn) {
        Mac mac = hmac(hashId, transformedKey);
        mac.update(challenge);
        mac.update(le(seqnum, 4));
        mac.update(le(tid, 2));
        mac.update((byte) scc);
        mac.update(HOST_HOST);
        mac.update(hostnqn.getBytes(StandardCharsets.US_ASCII));
        mac.update((byte) 0);
        return mac.doFinal(subnqn.getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * The controller's response R2 = HMAC(Kc', Ca2 || S2 || TID || 00h || "Controller" || subnqn || 00h || hostnqn),
     * where Kc' is the controller key transformed with the subsystem NQN and Ca2 the (augmented) challenge C2.
     */
    public static byte[] controllerResponse(int hashId, byte[] transformedKey, byte[] challenge, int seqnum, int tid,
                                            String subnqn, String hostnqn) {
        Mac mac = hmac(hashId, transformedKey);
        mac.update(challenge);
        mac.update(le(seqnum, 4));
        mac.update(le(tid, 2));
        mac.update((byte) 0);
        mac.update(CONTROLLER);
        mac.update(subnqn.getBytes(StandardCharsets.US_ASCII));
        mac.update((byte) 0);
        return mac.doFinal(hostnqn.getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] le(int v, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (v >>> (8 * i));
        }
        return b;
    }
}

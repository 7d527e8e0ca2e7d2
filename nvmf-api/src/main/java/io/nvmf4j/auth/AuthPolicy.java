package io.nvmf4j.auth;

import java.util.List;

/**
 * The hashes and DH groups one host may authenticate with, as nvmet's per-host {@code dhchap_hash} and
 * {@code dhchap_dhgroup} (which hold one each; here a list each). A Negotiate that offers none of the allowed hashes
 * gets Failure1 "hash function not usable" (04h), none of the allowed groups "DH group not usable" (05h).
 *
 * @param hashMask  bit {@code id} set for each allowed hash identifier (1 SHA-256, 2 SHA-384, 3 SHA-512)
 * @param groupMask bit {@code id} set for each allowed DH group identifier (0 null, 1 ffdhe2048 .. 5 ffdhe8192)
 */
public record AuthPolicy(int hashMask, int groupMask) {
    /** The hash names of the config, by identifier - 1. */
    public static final List<String> HASHES = List.of("sha256", "sha384", "sha512");
    /** The DH group names of the config, by identifier. */
    public static final List<String> GROUPS = List.of("null", "ffdhe2048", "ffdhe3072", "ffdhe4096", "ffdhe6144",
        "ffdhe8192");

    /**
     * The policy of a host: {@code hashes} and {@code groups} as configured (null: the default). The default allows
     * every hash and every group, except the null group for a host with a controller key: bidirectional
     * authentication without Diffie-Hellman gives a passive listener both responses to try keys against offline,
     * and the controller's response to anyone who has the host key.
     */
    public static AuthPolicy of(List<String> hashes, List<String> groups, boolean controllerKey) {
        int h = 0;
        for (String name : hashes == null ? HASHES : hashes) {
            h |= 1 << (HASHES.indexOf(name) + 1);
        }
        int g = 0;
        for (String name : groups == null ? GROUPS : groups) {
            g |= 1 << GROUPS.indexOf(name);
        }
        if (groups == null && controllerKey) {
            g &= ~1;
        }
        return new AuthPolicy(h, g);
    }

    public boolean allowsHash(int id) {
        return id > 0 && id < 32 && (hashMask & 1 << id) != 0;
    }

    public boolean allowsGroup(int id) {
        return id >= 0 && id < 32 && (groupMask & 1 << id) != 0;
    }
}

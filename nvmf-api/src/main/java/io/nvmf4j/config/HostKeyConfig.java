package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.List;
import java.util.Objects;

/**
 * Keys of one host on a subsystem. DH-HMAC-CHAP: the host must authenticate with the key in {@link #dhchapKey}; with
 * {@link #dhchapCtrlKey} the controller also proves itself when the host asks (bidirectional authentication). NVMe/TCP
 * TLS: {@link #tlsKey} is the PSK the host's TLS handshakes to this subsystem use on a listener with a secure channel.
 * All are paths of files holding a key (DHHC-1, NVMeTLSkey-1), mode 0600; the keys themselves never enter the config.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class HostKeyConfig {
    /** The host NQN. */
    public String host;
    /** Absolute path of the file with the host's DH-HMAC-CHAP key, or null (no in-band authentication). */
    public String dhchapKey;
    /** Absolute path of the file with the controller's key, or null (unidirectional). */
    public String dhchapCtrlKey;
    /** Absolute path of the file with the host's NVMe/TCP TLS PSK (interchange format), or null. */
    public String tlsKey;
    /**
     * How the TLS PSK for a version 0 identity is derived: {@code libnvme} (default: nvme-cli up to 2.15, as on a
     * Linux 6.12 host) or {@code rfc8446} (SPDK's host, nvme-cli 2.16 and later); see {@code TlsPsk}.
     */
    public String tlsKeyDerivation;
    /**
     * The hashes the host may authenticate with, of {@code sha256}, {@code sha384}, {@code sha512} (nvmet's
     * {@code dhchap_hash}); null (default): all three.
     */
    public List<String> dhchapHashes;
    /**
     * The DH groups the host may authenticate with, of {@code null}, {@code ffdhe2048}, {@code ffdhe3072},
     * {@code ffdhe4096}, {@code ffdhe6144}, {@code ffdhe8192} (nvmet's {@code dhchap_dhgroup}); null (default): all of
     * them, but the null group only for a host without {@link #dhchapCtrlKey} (bidirectional authentication
     * without Diffie-Hellman is refused unless named here).
     */
    public List<String> dhchapDhGroups;

    public HostKeyConfig() {
    }

    public HostKeyConfig(String host, String dhchapKey, String dhchapCtrlKey) {
        this.host = host;
        this.dhchapKey = dhchapKey;
        this.dhchapCtrlKey = dhchapCtrlKey;
    }

    /** The same keys for {@code hostnqn}. */
    public HostKeyConfig forHost(String hostnqn) {
        HostKeyConfig k = new HostKeyConfig(hostnqn, dhchapKey, dhchapCtrlKey);
        k.tlsKey = tlsKey;
        k.tlsKeyDerivation = tlsKeyDerivation;
        k.dhchapHashes = dhchapHashes == null ? null : List.copyOf(dhchapHashes);
        k.dhchapDhGroups = dhchapDhGroups == null ? null : List.copyOf(dhchapDhGroups);
        return k;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HostKeyConfig k && Objects.equals(host, k.host) && Objects.equals(dhchapKey, k.dhchapKey)
            && Objects.equals(dhchapCtrlKey, k.dhchapCtrlKey) && Objects.equals(tlsKey, k.tlsKey)
            && Objects.equals(tlsKeyDerivation, k.tlsKeyDerivation) && Objects.equals(dhchapHashes, k.dhchapHashes)
            && Objects.equals(dhchapDhGroups, k.dhchapDhGroups);
    }

    @Override
    public int hashCode() {
        return Objects.hash(host, dhchapKey, dhchapCtrlKey, tlsKey, tlsKeyDerivation, dhchapHashes, dhchapDhGroups);
    }
}

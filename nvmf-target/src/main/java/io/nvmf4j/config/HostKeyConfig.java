package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.Objects;

/**
 * DH-HMAC-CHAP keys of one host on a subsystem: the host must authenticate with the key in {@link #dhchapKey}; with
 * {@link #dhchapCtrlKey} the controller also proves itself when the host asks (bidirectional authentication). Both
 * are paths of files holding a DHHC-1 key, mode 0600; the keys themselves never enter the config.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class HostKeyConfig {
    /** The host NQN. */
    public String host;
    /** Absolute path of the file with the host's key. */
    public String dhchapKey;
    /** Absolute path of the file with the controller's key, or null (unidirectional). */
    public String dhchapCtrlKey;

    public HostKeyConfig() {
    }

    public HostKeyConfig(String host, String dhchapKey, String dhchapCtrlKey) {
        this.host = host;
        this.dhchapKey = dhchapKey;
        this.dhchapCtrlKey = dhchapCtrlKey;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HostKeyConfig k && Objects.equals(host, k.host) && Objects.equals(dhchapKey, k.dhchapKey)
            && Objects.equals(dhchapCtrlKey, k.dhchapCtrlKey);
    }

    @Override
    public int hashCode() {
        return Objects.hash(host, dhchapKey, dhchapCtrlKey);
    }
}

package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.ArrayList;
import java.util.List;

/**
 * The discovery subsystem ({@code nqn.2014-08.org.nvmexpress.discovery}): every host may discover, so it has no hosts
 * list, but a host that discovers over TLS ({@code nvme discover --tls}: its PSK identity names the discovery NQN)
 * needs a PSK here, as SPDK's {@code nvmf_subsystem_add_host} on the discovery NQN with {@code --psk} gives one.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class DiscoveryConfig {
    /** Per host: {@code host} and {@code tlsKey} (and {@code tlsKeyDerivation}); no DH-HMAC-CHAP keys. */
    public List<HostKeyConfig> hostKeys = new ArrayList<>();

    /** The entry of {@code hostnqn}, or null. */
    public HostKeyConfig hostKey(String hostnqn) {
        return hostKeys == null ? null : hostKeys.stream().filter(k -> k != null && hostnqn.equals(k.host))
            .findFirst().orElse(null);
    }
}

//! The one HTTP client configuration tdm uses (for `net.fetch` and for hubs): it follows no
//! redirect on its own (each caller checks every target before connecting to it), takes no
//! proxy from the environment (the request goes to the host that was checked) and hands error
//! statuses back as responses.

/// A new agent with that configuration.
pub fn agent() -> ureq::Agent {
    ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .max_redirects(0)
            .http_status_as_error(false)
            .proxy(None)
            .user_agent("contour-tdm")
            .build(),
    )
}

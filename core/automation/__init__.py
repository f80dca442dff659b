"""What memdesk runs for the operator: one insight-extraction run (:mod:`.extraction`: prompt,
provider, a proposal for review) and the unattended runs (:mod:`.schedule`)."""

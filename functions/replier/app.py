"""ReplierFunction: placeholder until the replier lands (issue 3)."""

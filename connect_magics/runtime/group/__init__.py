"""One group, many processes: membership and leadership (membership.py), writes forwarded from followers
to the leader (forwarding.py), and the leader's duties (leadership.py). See docs/design.md."""

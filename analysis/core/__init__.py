"""What every level shares: findings, rules, settings, escalation, targets, platforms, devices."""

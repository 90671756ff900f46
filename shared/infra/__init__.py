"""What every service runs on: settings, the broker and its delivery policy, the object and
state stores, bounded child processes and the model client."""

"""The contracts between the services and with other systems: subjects, events and commands,
the stored page models, the report, the register, review records and the small I/O interfaces."""

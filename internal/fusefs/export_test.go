package fusefs

// StatfsBlock is statfsBlock for the tests in package fusefs_test.
const StatfsBlock = statfsBlock

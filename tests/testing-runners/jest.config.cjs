// Jest with jsdom, as MSW's documentation sets it up (jest-fixed-jsdom gives jsdom Node's fetch, streams and
// encoders), the package resolved from the workspace's build (pkg/, its CommonJS files).
module.exports = {
  testEnvironment: 'jest-fixed-jsdom',
  testEnvironmentOptions: { customExportConditions: [''] },
  testMatch: ['<rootDir>/*.jest.test.cjs'],
  moduleNameMapper: { '^managed-eventsource/(.*)$': '<rootDir>/../../pkg/$1.cjs' },
};

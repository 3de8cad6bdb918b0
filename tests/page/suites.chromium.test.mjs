// The in-browser suites in Chromium (see suites.mjs).
import { runSuites } from './suites.mjs';

runSuites('Chromium');

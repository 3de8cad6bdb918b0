// The in-browser suites in WebKit (see suites.mjs).
import { runSuites } from './suites.mjs';

runSuites('WebKit');

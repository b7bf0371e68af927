// GET /v1/devices as the panel shows it: one row per device per replica.

export interface DeviceMemory {
  name: string;
  description: string;
  type: string;
  replica: number | null;
  memoryFree: number | null;
  memoryTotal: number | null;
  layers: number | null;
}
